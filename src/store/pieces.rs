//! Streaming a blob in pieces: reused piece buffers and the loop that reads
//! a range piece by piece, for sessions and the server that sends them.

use crate::error::Result;

/// Piece buffers handed back by their last user, for the next stream: a
/// fresh buffer of a chunk's size costs a zero fill and, coming from mmap,
/// a page fault per 4 KiB, more than reading the piece into it.
static SPARE_PIECES: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Spare piece buffers kept at most (with 256 KiB pieces, 16 MiB).
const MAX_SPARE_PIECES: usize = 64;

/// A buffer of `len` bytes for a streamed piece, reused when one is spare.
pub fn piece_buffer(len: usize) -> Vec<u8> {
    let spare = SPARE_PIECES.lock().ok().and_then(|mut s| s.pop());
    let mut buf = spare.unwrap_or_default();
    buf.resize(len, 0);
    buf
}

/// Hands a piece buffer back once its bytes have been sent.
pub fn recycle_piece(buf: Vec<u8>) {
    if let Ok(mut spare) = SPARE_PIECES.lock()
        && spare.len() < MAX_SPARE_PIECES
    {
        spare.push(buf);
    }
}

/// Reads [offset, offset + len) in pieces of at most `piece` bytes with
/// `read_at` (which returns how many bytes it filled, 0 at the end) and hands
/// each to `sink` until it returns false. Returns the bytes delivered.
pub fn stream_pieces(
    offset: u64,
    len: u64,
    piece: usize,
    sink: &mut dyn FnMut(Vec<u8>) -> bool,
    mut read_at: impl FnMut(u64, &mut [u8]) -> Result<usize>,
) -> Result<u64> {
    let mut done = 0u64;
    while done < len {
        let want = ((len - done) as usize).min(piece);
        let mut buf = piece_buffer(want);
        let n = read_at(offset + done, &mut buf)?;
        buf.truncate(n);
        done += n as u64;
        if n == 0 || !sink(buf) {
            break;
        }
    }
    Ok(done)
}
