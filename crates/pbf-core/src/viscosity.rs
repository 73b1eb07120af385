//! XSPH viscosity (Macklin & Müller 2013, eq. 17), fused with the curl that vorticity
//! confinement needs, since both read the same neighbours and velocities.

use crate::lanes::Lane;
use crate::neighbourhood::Neighbourhood;
use crate::parallel::for_each_chunk;
use pbf_kernels::Kernel;

/// One pass over the neighbours: `v_next_i = v_i + c sum_j (m / rho_j)(v_j - v_i) W_ij`
/// and, when `omega` is given, the curl
/// `omega_i = sum_j (m / rho_j) gradW_ij x (v_j - v_i)` and its magnitude.
#[allow(clippy::too_many_arguments)]
pub(crate) fn xsph_and_curl<L: Lane, const D: usize>(
    nb: &Neighbourhood<'_, D>,
    kernel: &Kernel<D>,
    mass: f32,
    c: f32,
    density: &[f32],
    velocity: [&[f32]; D],
    next: [&mut [f32]; D],
    omega: Option<[&mut [f32]; 4]>,
) {
    let body = |start: usize, next: &mut [&mut [f32]; D], mut omega: Option<&mut [&mut [f32]; 4]>| {
        for k in 0..next[0].len() {
            let i = start + k;
            let vi: [L; D] = core::array::from_fn(|a| L::splat(velocity[a][i]));
            let mut xsph = [L::splat(0.0); D];
            let mut curl = [L::splat(0.0); 3];
            let want_curl = omega.is_some();
            nb.for_each_block::<L>(i, |j, x, r2| {
                let volume = L::splat(mass) * recip(L::load(density, j));
                let dv: [L; D] = core::array::from_fn(|a| L::load(velocity[a], j) - vi[a]);
                let w = L::poly6(kernel, r2);
                let t = L::xsph(kernel, volume, dv, w);
                for a in 0..D {
                    xsph[a] += t[a];
                }
                if want_curl {
                    let factor = L::gradient_factor(kernel, r2);
                    let grad: [L; D] = core::array::from_fn(|a| factor * x[a]);
                    let t = L::curl(kernel, volume, dv, grad);
                    for a in 0..3 {
                        curl[a] += t[a];
                    }
                }
            });
            for a in 0..D {
                next[a][k] = velocity[a][i] + c * xsph[a].sum();
            }
            if let Some(omega) = omega.as_deref_mut() {
                let w: [f32; 3] = core::array::from_fn(|a| curl[a].sum());
                for a in 0..3 {
                    omega[a][k] = w[a];
                }
                omega[3][k] = pbf_kernels::norm2(w).sqrt();
            }
        }
    };
    match omega {
        Some(omega) => for_each_chunk((next, omega), &|start, (mut next, mut omega)| {
            body(start, &mut next, Some(&mut omega))
        }),
        None => for_each_chunk(next, &|start, mut next| body(start, &mut next, None)),
    }
}

/// `1 / density` where the density is positive, else 0 (lanes read past the end of the
/// arrays as 0, and those lanes are masked anyway).
#[inline(always)]
fn recip<L: Lane>(density: L) -> L {
    L::recip_or_zero(density)
}
