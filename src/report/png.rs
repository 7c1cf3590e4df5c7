//! Charts as PNG: the same SVG the HTML report shows, rasterized by resvg at
//! twice its size so it stays sharp in a README or a ticket.

use std::sync::Arc;

use crate::error::{Error, Result};

/// Turns chart SVG into PNG; holds the system's fonts, loaded once for all
/// charts of a report.
pub struct Rasterizer {
    options: resvg::usvg::Options<'static>,
}

impl Rasterizer {
    /// Loads the system's fonts once; without any, text could not be drawn
    /// and the PNGs would show unlabeled axes, so that is an error.
    pub fn new() -> Result<Rasterizer> {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_system_fonts();
        if db.is_empty() {
            return Err(Error::usage(
                "--png: no fonts found on this system to label the charts; install one \
                 (Debian: apt-get install fonts-dejavu-core) or leave out --png",
            ));
        }
        let mut options = resvg::usvg::Options::default();
        // The charts ask for DejaVu Sans first; any sans font will do.
        let has_dejavu = db
            .faces()
            .any(|f| f.families.iter().any(|(n, _)| n == "DejaVu Sans"));
        let first_family = db
            .faces()
            .next()
            .and_then(|f| f.families.first())
            .map(|(name, _)| name.clone());
        if let (false, Some(family)) = (has_dejavu, first_family) {
            db.set_sans_serif_family(family);
        }
        options.fontdb = Arc::new(db);
        Ok(Rasterizer { options })
    }

    /// `svg` as PNG bytes at twice its pixel size.
    pub fn png(&self, svg: &str) -> Result<Vec<u8>> {
        let tree = resvg::usvg::Tree::from_str(svg, &self.options)
            .map_err(|e| Error::usage(format!("cannot draw a chart as PNG: {e}")))?;
        let scale = 2.0;
        let size = tree.size();
        let mut pixmap = resvg::tiny_skia::Pixmap::new(
            (size.width() * scale).ceil() as u32,
            (size.height() * scale).ceil() as u32,
        )
        .ok_or_else(|| Error::usage("cannot draw a chart as PNG: empty chart"))?;
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| Error::usage(format!("cannot encode a chart as PNG: {e}")))
    }
}
