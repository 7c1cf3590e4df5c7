# Sourced by the benches that build C against SQLite: the amalgamation
# blobbench bundles (libsqlite3-sys's sqlite3.c) and the -D flags and -O3
# its build uses, so a C program and blobbench run the very same SQLite.
#
#   build_against_sqlite OUT SOURCE.c   (rebuilds only when OUT is missing)

sqlite_sys_dir() {
    cargo metadata --format-version 1 | python3 -c '
import json, sys, os
m = json.load(sys.stdin)
print(os.path.dirname([p["manifest_path"] for p in m["packages"] if p["name"] == "libsqlite3-sys"][0]))'
}

build_against_sqlite() {
    local out=$1 source=$2 sys amalg flags
    [ -x "$out" ] && return 0
    sys=$(sqlite_sys_dir)
    amalg=$sys/sqlite3
    flags=$(grep -o '"-DSQLITE_[A-Z0-9_]*\(=[0-9]*\)\?"\|"-DHAVE_[A-Z0-9_]*\(=[0-9]*\)\?"\|"-D_POSIX_THREAD_SAFE_FUNCTIONS"' "$sys/build.rs" \
        | sed -n '1,/THREAD_SAFE_FUNCTIONS/p' | tr -d '"' | tr '\n' ' ')
    flags="$flags -DHAVE_LOCALTIME_R"
    echo "building $(basename "$out") with: gcc -O3 $flags" >&2
    # shellcheck disable=SC2086 # the flags are words
    gcc -O3 $flags -I"$amalg" "$source" "$amalg/sqlite3.c" -o "$out" -lpthread -ldl -lm
}
