//! The velocity phases of a step: `v = (p* - x) / dt` with the contact response at
//! the walls and colliders, then XSPH viscosity and vorticity confinement.

use super::{Solver, muts, refs};
use crate::boundary::Boundary;
use crate::collide::{bounding_box, contact_weight, for_each_block, respond};
use crate::constraint::Constraint;
use crate::lists::{GROUP, Neighbourhood, pack_volumes, repack_extra};
use crate::parallel::{for_each_chunk, stretches};
use crate::{vorticity, xsph};
use pbf_kernels::Lane;

impl<const D: usize> Solver<D> {
    /// Phase 6 of a step: the velocities `v = (p* - x) / dt`, then the friction and
    /// restitution of the particles in contact with a collider (collider by collider)
    /// or a face of the domain.
    pub(super) fn update_velocities(&mut self) {
        let dt = self.params.time_step();
        let margin = self.margin();
        let inv_dt = 1.0 / dt;
        let (positions, predicted) = (refs(&self.positions), refs(&self.predicted));
        let (colliders, domain) = (&self.colliders, &self.domain);
        let contact = margin + 0.01 * self.kernel.h();
        let (wall_friction, wall_restitution) = domain.response();
        for_each_chunk(muts(&mut self.velocities), &|start, v| {
            let range = start..start + v[0].len();
            let positions = stretches(positions, range.clone());
            let predicted = stretches(predicted, range);
            for_each_block(v[0].len(), |block, width| {
                let mut p = [[0.0f32; D]; GROUP];
                let mut vel = [[0.0f32; D]; GROUP];
                for l in 0..width {
                    let k = block + l;
                    p[l] = core::array::from_fn(|a| predicted[a][k]);
                    vel[l] = core::array::from_fn(|a| (p[l][a] - positions[a][k]) * inv_dt);
                }
                let (p, vel) = (&p[..width], &mut vel[..width]);
                // Collider by collider, each particle meeting them in order; a block
                // clear of one by its bounding box skips it (a domain without
                // colliders takes no box).
                let bounds = if colliders.is_empty() {
                    None
                } else {
                    bounding_box(&[p])
                };
                for c in colliders {
                    if bounds.is_some_and(|(lo, hi)| c.clear_of_box(lo, hi, contact)) {
                        continue;
                    }
                    for (p, vel) in p.iter().zip(vel.iter_mut()) {
                        if c.clear_of(*p, contact) {
                            continue;
                        }
                        let (d, normal) = c.distance_and_normal(*p);
                        if d < contact {
                            let (friction, restitution) = c.response();
                            let w = contact_weight(d, margin, contact);
                            respond(vel, normal, friction, restitution, w);
                        }
                    }
                }
                for (l, (p, vel)) in p.iter().zip(vel.iter_mut()).enumerate() {
                    domain.contacts(*p, contact, |normal, d| {
                        let w = contact_weight(d, margin, contact);
                        respond(vel, normal, wall_friction, wall_restitution, w)
                    });
                    for a in 0..D {
                        v[a][block + l] = vel[a];
                    }
                }
            });
        });
    }

    /// The end of phase 6: one pass computes the densities at the final positions, the
    /// XSPH blend of the velocities and the curl; a second one the vorticity
    /// confinement force that the next step applies.
    pub(super) fn xsph_and_vorticity<L: Lane>(&mut self) {
        let vorticity_on = self.params.vorticity_rel() > 0.0;
        // XSPH and the curl weigh the neighbours by the volumes of the last lambda
        // pass (one position delta earlier, or at these positions when the adaptive
        // iterations stopped on their target; `search` keeps them with their
        // particles); the pass computes the densities at the final positions, which
        // the step's diagnostics report.
        pack_volumes(
            &mut self.quads,
            refs(&self.predicted),
            &self.density,
            self.params.mass(),
        );
        let nb = Neighbourhood {
            lists: &self.lists,
            quads: &self.quads,
        };
        let constraint = Constraint::new(
            &self.params,
            &self.kernel,
            &self.tensile,
            self.relaxation,
            Boundary {
                domain: &self.domain,
                colliders: &self.colliders,
                tables: &self.walls,
                corners: super::corner_tables(
                    &self.domain,
                    &self.colliders,
                    &self.corners,
                    &self.kernel,
                ),
            },
        );
        let mut omega = self.omega.iter_mut();
        let omega: [&mut [f32]; 4] =
            core::array::from_fn(|_| omega.next().expect("4").as_mut_slice());
        xsph::xsph_and_curl::<L, D>(
            &nb,
            &constraint,
            self.params.xsph_per_step(),
            refs(&self.velocities),
            &mut self.velocity_quads,
            muts(&mut self.next),
            [&mut self.density, &mut self.count],
            vorticity_on.then_some(omega),
        );
        core::mem::swap(&mut self.velocities, &mut self.next);
        if vorticity_on {
            repack_extra::<D>(&mut self.quads, &self.omega[3]);
            let nb = Neighbourhood {
                lists: &self.lists,
                quads: &self.quads,
            };
            vorticity::confinement::<L, D>(
                &nb,
                &self.kernel,
                self.params.vorticity_epsilon(),
                refs(&self.omega),
                muts(&mut self.force),
            );
        }
    }
}
