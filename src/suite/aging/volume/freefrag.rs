//! Free space in pieces, from the reports of e2freefrag (ext4) and
//! xfs_spaceman's `freesp -s` (xfs): how many free extents, their mean
//! size, and how much of the free space lies in extents of 1 MiB or more
//! (where a new large blob can still be written in one piece).

use crate::result::aging::FreeSpace;

const MIB: u64 = 1 << 20;

/// The number after `label` on the line that begins with it.
fn field(text: &str, label: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// e2freefrag's sizes: "64K", "1M", "2G" (binary).
fn size(text: &str) -> Option<u64> {
    let text = text.trim().trim_end_matches('-');
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let shift = match unit {
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        "P" => 50,
        _ => return None,
    };
    digits.parse::<u64>().ok().map(|n| n << shift)
}

/// e2freefrag's report: "Blocksize:", "Free blocks:", "Num. free extent:"
/// and the histogram's rows ("   64K...  128K-  :   100   2500  19.86%").
pub(super) fn parse_e2freefrag(text: &str) -> Option<FreeSpace> {
    let block = field(text, "Blocksize:")?;
    let free_blocks = field(text, "Free blocks:")?;
    let extents = field(text, "Num. free extent:")?;
    let mut large = 0;
    for line in text.lines() {
        let Some((range, counts)) = line.split_once(':') else {
            continue;
        };
        let Some((low, _)) = range.split_once("...") else {
            continue;
        };
        let blocks = counts
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse::<u64>().ok());
        if let (Some(low), Some(blocks)) = (size(low), blocks)
            && low >= MIB
        {
            large += blocks;
        }
    }
    Some(FreeSpace {
        extents,
        mean_extent_bytes: (free_blocks * block).checked_div(extents).unwrap_or(0),
        share_in_1mib_or_more: (free_blocks > 0).then(|| large as f64 / free_blocks as f64),
        tool: "e2freefrag (ext4's free extents, read online through GETFSMAP)".into(),
    })
}

/// xfs_spaceman's `freesp -s`: rows "from to extents blocks pct" in
/// filesystem blocks of `block` bytes, then "total free extents N" and
/// "total free blocks N".
pub(super) fn parse_xfs_freesp(text: &str, block: u64) -> Option<FreeSpace> {
    let extents = field(text, "total free extents")?;
    let free_blocks = field(text, "total free blocks")?;
    let mut large = 0;
    for line in text.lines() {
        let numbers: Vec<&str> = line.split_whitespace().collect();
        if numbers.len() != 5 {
            continue;
        }
        if let (Ok(from), Ok(blocks)) = (numbers[0].parse::<u64>(), numbers[3].parse::<u64>())
            && from * block >= MIB
        {
            large += blocks;
        }
    }
    Some(FreeSpace {
        extents,
        mean_extent_bytes: (free_blocks * block).checked_div(extents).unwrap_or(0),
        share_in_1mib_or_more: (free_blocks > 0).then(|| large as f64 / free_blocks as f64),
        tool: "xfs_spaceman -c 'freesp -s' (xfs's free extents, read online through GETFSMAP)"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// e2freefrag 1.47 on a 64 MiB ext4 with 100 files of 100 kB removed
    /// from between others.
    const E2FREEFRAG: &str = "Device: /dev/loop0
Blocksize: 4096 bytes
Total blocks: 16384
Free blocks: 12587 (76.8%)

Min. free extent: 100 KB 
Max. free extent: 40348 KB
Avg. free extent: 496 KB
Num. free extent: 101

HISTOGRAM OF FREE EXTENT SIZES:
Extent Size Range :  Free extents   Free Blocks  Percent
   64K...  128K-  :           100          2500   19.86%
   32M...   64M-  :             1         10087   80.14%
";

    /// xfs_spaceman 6.1 on a 300 MiB xfs holding one 10 MiB file.
    const FREESP: &str = "   from      to extents  blocks    pct
      4       7       1       6   0.01
   2048    4095       1    2806   4.85
  16384   19200       3   54996  95.14
total free extents 5
total free blocks 57808
average free extent size 11561.6
";

    #[test]
    fn e2freefrag_gives_extents_mean_and_the_share_in_large_ones() {
        let f = parse_e2freefrag(E2FREEFRAG).unwrap();
        assert_eq!(f.extents, 101);
        assert_eq!(f.mean_extent_bytes, 12587 * 4096 / 101);
        let share = f.share_in_1mib_or_more.unwrap();
        assert!((share - 10087.0 / 12587.0).abs() < 1e-9, "{share}");
        assert!(f.tool.starts_with("e2freefrag"));
        assert_eq!(size("128K-"), Some(128 << 10));
        assert_eq!(size("1M"), Some(MIB));
        assert!(parse_e2freefrag("e2freefrag: cannot open").is_none());
    }

    #[test]
    fn xfs_freesp_gives_extents_mean_and_the_share_in_large_ones() {
        let f = parse_xfs_freesp(FREESP, 4096).unwrap();
        assert_eq!(f.extents, 5);
        assert_eq!(f.mean_extent_bytes, 57808 * 4096 / 5);
        // 2048 blocks of 4 KiB = 8 MiB and up: all but the 6 blocks.
        let share = f.share_in_1mib_or_more.unwrap();
        assert!((share - 57802.0 / 57808.0).abs() < 1e-9, "{share}");
        // With 512-byte blocks the 2048-block row (1 MiB) still counts, the
        // 4-block one does not.
        let small = parse_xfs_freesp(FREESP, 512).unwrap();
        assert!((small.share_in_1mib_or_more.unwrap() - 57802.0 / 57808.0).abs() < 1e-9);
        assert!(parse_xfs_freesp("", 4096).is_none());
    }
}
