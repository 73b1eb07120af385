//! Putting the caller's per-point arrays into the grid's sorted order.

use rayon::prelude::*;

use super::Grid;
use crate::GridError;

/// Elements per task when a per-point array is reordered.
const REORDER_CHUNK: usize = 1 << 13;

impl<const D: usize> Grid<D> {
    /// Puts a per-point array into sorted order: `data[k] <- old data[permutation[k]]`.
    ///
    /// A parallel gather into `scratch` (resized as needed, its capacity kept), which
    /// is then swapped with `data`; call it with the same scratch for every array of
    /// the same type and nothing is allocated in steady state.
    ///
    /// # Errors
    ///
    /// [`DataLength`](GridError::DataLength) when `data.len() != len()`.
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[5.0, 0.0], &[0.0, 0.0]], 1.0)?;
    /// let mut ids = vec!["far", "origin"];
    /// grid.reorder(&mut ids, &mut Vec::new())?;
    /// assert_eq!(ids, ["origin", "far"]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn reorder<T: Copy + Send + Sync>(
        &self,
        data: &mut Vec<T>,
        scratch: &mut Vec<T>,
    ) -> Result<(), GridError> {
        self.check_data(data.len())?;
        if self.identity {
            return Ok(());
        }
        scratch.clear();
        let src = &data[..];
        scratch.par_extend(
            self.permutation
                .par_iter()
                .with_min_len(REORDER_CHUNK)
                .map(|&p| src[p as usize]),
        );
        std::mem::swap(data, scratch);
        Ok(())
    }

    /// Writes the sorted order of `src` into `dst`: `dst[k] = src[permutation[k]]`.
    ///
    /// # Errors
    ///
    /// [`DataLength`](GridError::DataLength) unless both have `len()` elements.
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[5.0, 0.0, 5.1], &[0.0, 0.0, 0.0]], 1.0)?;
    /// let mut out = [0u8; 3];
    /// grid.reorder_into(&[10, 20, 30], &mut out)?;
    /// assert_eq!(out, [20, 10, 30]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn reorder_into<T: Copy + Send + Sync>(
        &self,
        src: &[T],
        dst: &mut [T],
    ) -> Result<(), GridError> {
        self.check_data(src.len())?;
        self.check_data(dst.len())?;
        dst.par_chunks_mut(REORDER_CHUNK)
            .zip(self.permutation.par_chunks(REORDER_CHUNK))
            .for_each(|(dst, perm)| {
                for (d, &p) in dst.iter_mut().zip(perm) {
                    *d = src[p as usize];
                }
            });
        Ok(())
    }

    /// [`reorder_into`](Grid::reorder_into) for records known only as bytes, e.g. a
    /// GPU buffer of `Pod` structs seen through `bytemuck::cast_slice`: element `k`
    /// of `dst` (bytes `k * element_size ..`) becomes element `permutation[k]` of `src`.
    ///
    /// # Errors
    ///
    /// [`DataLength`](GridError::DataLength) unless both hold `len()` elements of
    /// `element_size` bytes (`found` is then the byte length divided by the size).
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[5.0, 0.0], &[0.0, 0.0]], 1.0)?;
    /// let records: [[f32; 3]; 2] = [[5.0, 0.0, 1.0], [0.0, 0.0, 2.0]];
    /// let mut out = [[0.0f32; 3]; 2];
    /// grid.reorder_bytes(bytemuck::cast_slice(&records), bytemuck::cast_slice_mut(&mut out), 12)?;
    /// assert_eq!(out, [[0.0, 0.0, 2.0], [5.0, 0.0, 1.0]]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn reorder_bytes(
        &self,
        src: &[u8],
        dst: &mut [u8],
        element_size: usize,
    ) -> Result<(), GridError> {
        let expected = self.len() * element_size;
        for len in [src.len(), dst.len()] {
            if len != expected {
                return Err(GridError::DataLength {
                    expected: self.len(),
                    found: len / element_size.max(1),
                });
            }
        }
        if element_size == 0 {
            return Ok(());
        }
        dst.par_chunks_mut(REORDER_CHUNK * element_size)
            .zip(self.permutation.par_chunks(REORDER_CHUNK))
            .for_each(|(dst, perm)| {
                for (d, &p) in dst.chunks_exact_mut(element_size).zip(perm) {
                    let s = p as usize * element_size;
                    d.copy_from_slice(&src[s..s + element_size]);
                }
            });
        Ok(())
    }
}
