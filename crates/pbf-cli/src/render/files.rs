//! Pictures as files: PNG images and looping animated GIFs.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, RgbImage};

use crate::error::CliError;

/// Saves an image as PNG.
///
/// # Errors
/// [`CliError::Write`] naming the path.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.png");
/// pbf_cli::save_png(&image::RgbImage::new(4, 4), &path)?;
/// assert!(path.exists());
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn save_png(img: &RgbImage, path: &Path) -> Result<(), CliError> {
    img.save_with_format(path, image::ImageFormat::Png)
        .map_err(|e| CliError::write(path, e))
}

/// An animated GIF written frame by frame, looping forever.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.gif");
/// let mut gif = pbf_cli::GifWriter::create(&path, 50)?;
/// gif.push(&image::RgbImage::new(8, 8))?;
/// gif.push(&image::RgbImage::from_pixel(8, 8, image::Rgb([255, 0, 0])))?;
/// gif.finish()?;
/// assert!(std::fs::read(&path).unwrap().starts_with(b"GIF89a"));
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub struct GifWriter {
    encoder: Option<GifEncoder<BufWriter<File>>>,
    path: PathBuf,
    delay: Delay,
}

impl GifWriter {
    /// Starts a GIF at `path` showing each frame for `delay_ms` milliseconds (rounded
    /// to the format's 10 ms and at least 20 ms, the least browsers honour).
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    pub fn create(path: &Path, delay_ms: u32) -> Result<Self, CliError> {
        let file = File::create(path).map_err(|e| CliError::write(path, e))?;
        // Speed 10 of 30: NeuQuant quantisation, a fair trade of time against colour.
        let mut encoder = GifEncoder::new_with_speed(BufWriter::new(file), 10);
        encoder
            .set_repeat(Repeat::Infinite)
            .map_err(|e| CliError::write(path, e))?;
        let delay_ms = (delay_ms.max(20) + 5) / 10 * 10;
        Ok(Self {
            encoder: Some(encoder),
            path: path.to_owned(),
            delay: Delay::from_numer_denom_ms(delay_ms, 1),
        })
    }

    /// Appends a frame.
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    pub fn push(&mut self, img: &RgbImage) -> Result<(), CliError> {
        let Some(encoder) = self.encoder.as_mut() else {
            return Ok(());
        };
        let rgba = image::DynamicImage::ImageRgb8(img.clone()).into_rgba8();
        encoder
            .encode_frame(image::Frame::from_parts(rgba, 0, 0, self.delay))
            .map_err(|e| CliError::write(&self.path, e))
    }

    /// Flushes and closes the file.
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    pub fn finish(mut self) -> Result<(), CliError> {
        // Dropping the encoder writes the GIF trailer; flush errors surface here.
        if let Some(encoder) = self.encoder.take() {
            drop(encoder);
        }
        std::fs::metadata(&self.path)
            .map(|_| ())
            .map_err(|e| CliError::write(&self.path, e))
    }
}
