//! The lists' tests: both sifters against brute force and each other, the column
//! groups, the passes' walks at every width.

use super::*;

#[test]
fn tail_bits_keep_the_first_lanes() {
    assert_eq!(tail_bits(0), 0);
    assert_eq!(tail_bits(3), 0b111);
    assert_eq!(tail_bits(7), 0x7f);
    assert_eq!(tail_bits(8), 0xff);
    assert_eq!(tail_bits(100), 0xff);
}

/// Floats in `[0, 1)` from a linear congruential generator seeded by `seed`.
fn uniform(seed: u64) -> impl FnMut() -> f32 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn cloud(n: usize, seed: u64) -> [Vec<f32>; 3] {
    let mut next = uniform(seed);
    let mut p: [Vec<f32>; 3] = Default::default();
    for _ in 0..n {
        for axis in p.iter_mut() {
            axis.push(next());
        }
    }
    p
}

/// [`cloud`] binned in a grid of cells `h` and put in the grid's order.
fn sorted_cloud(n: usize, seed: u64, h: f32) -> ([Vec<f32>; 3], Grid<3>) {
    let mut p = cloud(n, seed);
    let mut grid = Grid::<3>::new();
    grid.rebuild([&p[0], &p[1], &p[2]], h).unwrap();
    let mut scratch = Vec::new();
    for a in p.iter_mut() {
        grid.reorder(a, &mut scratch).unwrap();
    }
    (p, grid)
}

/// `near` finds exactly the points of the ranges within h of a point by the scalar
/// test, in order, with ranges of every length (tails of one to seven lanes) and
/// points inside and outside the cloud, some on a particle itself.
#[test]
fn near_is_the_scalar_test_eight_at_a_time() {
    let (p, grid) = sorted_cloud(2000, 5, 0.1);
    let at = [&p[0][..], &p[1][..], &p[2][..]];
    let mut next = uniform(9);
    let points: Vec<[f32; 3]> = (0..200)
        .map(|k| {
            if k % 10 == 0 {
                core::array::from_fn(|a| p[a][k * 7])
            } else {
                core::array::from_fn(|_| 1.4 * next() - 0.2)
            }
        })
        .collect();
    let (mut found, mut lengths) = (0, std::collections::BTreeSet::new());
    for (k, point) in points.into_iter().enumerate() {
        // Within the grid's cells, and a smaller radius for a few.
        let h = if k % 3 == 0 { 0.06f32 } else { 0.1 };
        let mut ranges = [crate::CellRange::default(); 27];
        let count = grid.ranges_around(point, &mut ranges).unwrap();
        let ranges = &ranges[..count];
        lengths.extend(ranges.iter().map(|r| (r.end - r.start) % 8));
        let mut out = vec![u32::MAX];
        near(at, point, h * h, ranges, &mut out);
        let expected: Vec<u32> = ranges
            .iter()
            .flat_map(|r| r.as_range())
            .filter(|&j| {
                let d: [f32; 3] = core::array::from_fn(|a| point[a] - p[a][j]);
                pbf_kernels::within(pbf_kernels::norm2(d), h * h)
            })
            .map(|j| j as u32)
            .collect();
        assert_eq!(out[0], u32::MAX, "appended, not cleared");
        assert_eq!(&out[1..], &expected[..], "point {point:?}");
        found += expected.len();
    }
    assert!(found > 300, "{found} points found");
    assert!(lengths.len() == 8, "tails of every length: {lengths:?}");
}

/// The invariant the passes' unchecked loads rely on: after a build of fewer
/// particles than the last, every entry of every group's slots (padding included)
/// is still a particle of the new build; and a pass over quads of other particles
/// is refused.
#[test]
fn every_entry_is_a_particle_of_the_last_build() {
    let mut lists = NeighbourLists::default();
    for (n, h) in [(3000, 0.12f32), (700, 0.2), (5, 0.9)] {
        let (p, grid) = sorted_cloud(n, 11, h);
        lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 4).unwrap();
        assert_eq!(lists.len(), n);
        for first in (0..n).step_by(GROUP) {
            let (columns, slots, _) = lists.group(first, GROUP);
            let mut entries = (0..slots).flat_map(|s| (0..GROUP).map(move |l| (s, l)));
            assert!(
                entries.all(|(s, l)| (columns.lane(s, l) as usize) < n),
                "group {first} of {n}"
            );
        }
        let mut quads = Vec::new();
        pack(&mut quads, [&p[0], &p[1], &p[2]], &vec![0.0; n]);
        let short = &quads[..n - 1];
        let nb = Neighbourhood::<3> {
            lists: &lists,
            quads: short,
        };
        let refused = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            nb.for_each_slot::<f32x8>(0, |_, _, _, _| {});
        }));
        assert!(
            refused.is_err(),
            "quads of {} particles, lists of {n}",
            n - 1
        );
    }
}

/// Span limits for tests: the default (every group narrow in a small cloud),
/// none (every group wide) and a mix.
const SPANS: [Option<u32>; 3] = [None, Some(0), Some(60)];

/// Empty lists of every sifter this CPU runs and every span limit of [`SPANS`], whose
/// builds share a sifter's scratch among 1, 3 and 16 blocks (the small builds of
/// the tests would not share it).
fn every_kind_of_lists() -> impl Iterator<Item = NeighbourLists> {
    sifters().into_iter().flat_map(|sifter| {
        SPANS
            .into_iter()
            .zip([1, 3, 16])
            .map(move |(span, scratch)| NeighbourLists {
                narrow_span: span,
                scratch_blocks: Some(scratch),
                ..NeighbourLists::with_sifter(sifter)
            })
    })
}

#[test]
fn build_chunks_share_scratch_by_the_particle_count_alone() {
    let shares = [
        (1, 1),
        (63, 1),
        (64, 1),
        (128, 2),
        (400, 6),
        (3907, 16),
        (1 << 20, 16),
    ];
    for (blocks, per_chunk) in shares {
        assert_eq!(scratch_blocks(blocks), per_chunk, "{blocks} blocks");
    }
}

#[test]
fn lists_hold_exactly_the_points_within_h() {
    for (n, h) in [(0, 0.1f32), (1, 0.1), (700, 0.1), (3000, 0.07), (2000, 0.3)] {
        let (p, grid) = sorted_cloud(n, n as u64 + 7, h);
        // Narrow groups, wide ones, and a mix.
        for mut lists in every_kind_of_lists() {
            // Twice, so that the second build reuses the blocks of the first.
            for _ in 0..2 {
                let mut pairs = 0;
                lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 4).unwrap();
                for i in 0..n {
                    let expected: Vec<u32> = (0..n)
                        .filter(|&j| {
                            let x: [f32; 3] = core::array::from_fn(|a| p[a][i] - p[a][j]);
                            j != i && pbf_kernels::within(pbf_kernels::norm2(x), h * h)
                        })
                        .map(|j| j as u32)
                        .collect();
                    assert_eq!(lists.of(i), expected, "particle {i} of {n}");
                    let column = lists.column_of(i);
                    assert!(
                        column[expected.len()..].iter().all(|&j| j == i as u32),
                        "particle {i} of {n}: padded with itself"
                    );
                    pairs += expected.len() as u64;
                }
                assert_eq!(lists.pairs(), pairs);
            }
        }
    }
}

#[test]
fn inserted_pairs_follow_each_list_and_keep_the_padding() {
    // 700 points: the last block is partial, so new slots there pad past its
    // particles too.
    let n = 700;
    let h = 0.1f32;
    let (p, grid) = sorted_cloud(n, 11, h);
    let positions = [&p[0][..], &p[1][..], &p[2][..]];
    for mut lists in every_kind_of_lists() {
        lists.build(&grid, positions, h * h, 4).unwrap();
        let mut expected: Vec<Vec<u32>> = (0..n).map(|i| lists.of(i)).collect();
        let formats = lists.formats();
        // The longest list of a group (a new slot, later groups move up), a short
        // one, the longest in the last group of the partial block (a new slot
        // padded past the particles), and the same particle twice (its second
        // entry needs a slot of its own again). A group's particles are its
        // lanes' members.
        let group = |first: usize, width: usize| lists.members(first)[..width].to_vec();
        let by_length = |i: &u32| (expected[*i as usize].len(), *i);
        let longest = group(16, 16).into_iter().max_by_key(by_length).unwrap() as usize;
        let shortest = group(32, 16).into_iter().min_by_key(by_length).unwrap() as usize;
        let last = group(688, 12).into_iter().max_by_key(by_length).unwrap() as usize;
        let slots_before = |lists: &NeighbourLists, i: usize| lists.group(lists.lane_of(i), 1).1;
        let (group_slots, last_slots) = (slots_before(&lists, longest), slots_before(&lists, last));
        for (i, j) in [(longest, 699), (shortest, 3), (last, 0), (longest, 698)] {
            lists.insert(i, j);
            expected[i].push(j);
        }
        assert_eq!(
            slots_before(&lists, longest),
            group_slots + 2,
            "two new slots"
        );
        assert_eq!(slots_before(&lists, last), last_slots + 1, "a new slot");
        // Particle 0 is below the base of the last group: a narrow one widens.
        if lists.narrow_span.is_none() {
            assert_eq!(formats.1, 0, "all narrow");
            assert!(lists.formats().1 >= 1, "the last group widened");
        }
        // Lanes 700..704 of the last group: past the particles, the last one.
        let (columns, slots, _) = lists.group(688, 16);
        for s in 0..slots {
            assert_eq!(
                (12..16).map(|l| columns.lane(s, l)).collect::<Vec<_>>(),
                [699; 4],
                "slot {s}"
            );
        }
        let mut pairs = 0;
        for i in 0..n {
            assert_eq!(lists.of(i), expected[i], "particle {i}");
            let column = lists.column_of(i);
            assert!(
                column[expected[i].len()..].iter().all(|&j| j == i as u32),
                "particle {i}: padded with itself"
            );
            pairs += expected[i].len() as u64;
        }
        assert_eq!(lists.pairs(), pairs);
        // What a pass sees: every group's lanes at eight and one lanes a time.
        let mut quads = Vec::new();
        pack(&mut quads, positions, &vec![0.0; n]);
        let nb = Neighbourhood::<3> {
            lists: &lists,
            quads: &quads,
        };
        pbf_kernels::for_each_lane! {
            let nb: &'a Neighbourhood<'a, 3> = &nb;
            let expected: &'a [Vec<u32>] = &expected;
            |L| {
                assert_eq!(seen_by::<L>(nb), expected, "{} lanes", L::WIDTH);
            }
        }
    }
}

/// Every particle's neighbours as a pass on lanes `L` sees them: the entries of
/// the lanes within the particle's list.
fn seen_by<L: Lane>(nb: &Neighbourhood<'_, 3>) -> Vec<Vec<u32>> {
    let n = nb.lists.len();
    let mut seen: Vec<Vec<u32>> = vec![Vec::new(); n];
    L::run(|| {
        for_each_group::<L>(0, n, |first, width| {
            let members = nb.lists.members(first);
            nb.for_each_slot::<L>(first, |indices, _, r2, _| {
                let mut r = [0.0f32; GROUP];
                r2.store(&mut r[..L::WIDTH]);
                for l in 0..width {
                    if r[l].is_finite() {
                        seen[members[l] as usize].push(indices.indices()[l]);
                    }
                }
            });
        });
    });
    seen
}

/// The lines of four particles of the candidate ranges around the cells of block
/// `b`'s particles, as ranges of lines.
fn candidate_spans(grid: &Grid<3>, b: usize, n: usize) -> Vec<(u32, u32)> {
    let cells = &grid.cell_of()[b * BLOCK..((b + 1) * BLOCK).min(n)];
    cells
        .iter()
        .flat_map(|&c| grid.candidate_ranges(c as usize))
        .filter(|r| !r.is_empty())
        .map(|r| (r.start / 4, (r.end - 1) / 4))
        .collect()
}

/// What the passes prefetch: with one thread (so that no two chunks race for a
/// stamp) every block announces only lines of its own candidates, and every line
/// its lists gather is announced in time, by itself or an earlier block of its
/// chunk; a line is announced again only as a line that cells share.
#[test]
fn each_block_announces_the_lines_its_chunk_first_touches() {
    // 70 blocks: a full chunk and a partial one; about 30 neighbours a point.
    let n = 70 * BLOCK - 5;
    let h = 0.082f32;
    let (p, grid) = sorted_cloud(n, 5, h);
    let mut lists = NeighbourLists {
        prefetch_from: Some(0),
        ..NeighbourLists::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 4))
        .unwrap();
    assert!(lists.prefetching);
    let blocks = n.div_ceil(BLOCK);
    for chunk_start in (0..blocks).step_by(AHEAD_CHUNK) {
        let (mut announced, mut announcements) = (std::collections::HashSet::new(), 0);
        for b in chunk_start..(chunk_start + AHEAD_CHUNK).min(blocks) {
            let spans = candidate_spans(&grid, b, n);
            for &line in &lists.ahead[b] {
                assert!(
                    spans.iter().any(|&(lo, hi)| (lo..=hi).contains(&line)),
                    "block {b} announced line {line}, not among its candidates"
                );
                announced.insert(line);
                announcements += 1;
            }
            for i in b * BLOCK..((b + 1) * BLOCK).min(n) {
                for j in lists.of(i) {
                    assert!(
                        announced.contains(&(j / 4)),
                        "block {b} gathers line {} before it is announced",
                        j / 4
                    );
                }
            }
        }
        // Lines shared by cells come again, but rarely.
        assert!(
            announcements as f64 <= 1.05 * announced.len() as f64,
            "{announcements} announcements of {} lines",
            announced.len()
        );
    }
}

/// Below [`PREFETCH_FROM`] particles a build marks nothing; and the prefetches of a
/// marked build leave every pass's sums as they are, at every width.
#[test]
fn prefetching_is_off_for_small_builds_and_changes_no_sum() {
    let n = 3 * BLOCK + 40;
    let h = 0.12f32;
    let (p, grid) = sorted_cloud(n, 3, h);
    let positions = [&p[0][..], &p[1][..], &p[2][..]];
    let mut plain = NeighbourLists::default();
    plain.build(&grid, positions, h * h, 4).unwrap();
    assert!(!plain.prefetching);
    assert!(plain.ahead.iter().all(|lines| lines.is_empty()));
    let mut marked = NeighbourLists {
        prefetch_from: Some(n),
        ..NeighbourLists::default()
    };
    marked.build(&grid, positions, h * h, 4).unwrap();
    assert!(marked.prefetching);
    assert!(
        marked.ahead[1..n.div_ceil(BLOCK)]
            .iter()
            .any(|lines| !lines.is_empty())
    );
    assert_same_sums(&plain, &[&marked], positions, h);
}

/// Every pass sum of [`pass_sums`] over `others` has the bits of its sum over
/// `reference` (which sees neighbours), at every width this CPU runs.
fn assert_same_sums(
    reference: &NeighbourLists,
    others: &[&NeighbourLists],
    positions: [&[f32]; 3],
    h: f32,
) {
    pbf_kernels::for_each_lane! {
        let reference: &'a NeighbourLists = reference;
        let others: &'a [&'a NeighbourLists] = others;
        let positions: [&'a [f32]; 3] = positions;
        let h: f32 = h;
        |L| {
            let expected = pass_sums::<L>(reference, positions, h);
            assert!(expected.iter().any(|&s| s != 0), "the sums see neighbours");
            for (k, other) in others.iter().enumerate() {
                let sums = pass_sums::<L>(other, positions, h);
                assert_eq!(sums, expected, "lists {k}, {} lanes", L::WIDTH);
            }
        }
    }
}

/// The bits of a sum over every particle's neighbours on lanes `L`, of the quads
/// (with an extra value) and of what a pass gathers by the slot's neighbours
/// besides: other quads (`Slot::gather4`).
fn pass_sums<L: Lane>(lists: &NeighbourLists, positions: [&[f32]; 3], h: f32) -> Vec<u32> {
    let n = positions[0].len();
    let extra: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let other: Vec<f32> = (0..n).map(|i| (i as f32).sqrt()).collect();
    let (mut quads, mut others) = (Vec::new(), Vec::new());
    pack(&mut quads, positions, &extra);
    pack(&mut others, positions, &other);
    let kernel = pbf_kernels::Kernel::<3>::new(h).unwrap();
    let nb = Neighbourhood::<3> {
        lists,
        quads: &quads,
    };
    let mut out = vec![0; n];
    L::run(|| {
        for_each_group::<L>(0, out.len(), |first, width| {
            let mut sum = L::splat(0.0);
            nb.for_each_slot::<L>(first, |j, x, r2, extra| {
                let q = j.gather4(&others);
                sum += L::poly6(&kernel, r2) * (extra + x[0] + q[3] + q[1]);
            });
            let mut lanes = [0.0f32; GROUP];
            sum.store(&mut lanes[..L::WIDTH]);
            for l in 0..width {
                out[nb.lists.members(first)[l] as usize] = lanes[l].to_bits();
            }
        });
    });
    out
}

/// Lists built with every group narrow, every group wide, and a mix (a span
/// limit between), by both sifters: the same entries, and the same sums in every
/// pass at every width, bit for bit.
#[test]
fn narrow_and_wide_groups_give_the_same_lists_and_sums() {
    let n = 3 * BLOCK + 40;
    let h = 0.12f32;
    let (p, grid) = sorted_cloud(n, 5, h);
    let positions = [&p[0][..], &p[1][..], &p[2][..]];
    let build = |span: Option<u32>, sifter: Sifter| {
        let mut lists = NeighbourLists {
            narrow_span: span,
            ..NeighbourLists::with_sifter(sifter)
        };
        lists.build(&grid, positions, h * h, 4).unwrap();
        lists
    };
    let narrow = build(None, Sifter::default());
    let wide = build(Some(0), Sifter::default());
    assert_eq!(narrow.formats(), (n.div_ceil(GROUP), 0), "all narrow");
    assert_eq!(wide.formats(), (0, n.div_ceil(GROUP)), "all wide");
    // A span limit that splits the groups.
    let mut spans: Vec<u32> = (0..n.div_ceil(GROUP)).map(|g| narrow.span_of(g)).collect();
    spans.sort_unstable();
    let middle = spans[spans.len() / 2];
    for sifter in sifters() {
        let mixed = build(Some(middle), sifter);
        let (some_narrow, some_wide) = mixed.formats();
        assert!(
            some_narrow > 0 && some_wide > 0,
            "{some_narrow} narrow, {some_wide} wide"
        );
        // Both sifters pick the same groups: those within the span.
        let within = spans.iter().filter(|&&s| s <= middle).count();
        assert_eq!(some_narrow, within, "{sifter:?}");
        for i in 0..n {
            assert_eq!(mixed.column_of(i), wide.column_of(i), "particle {i}");
            assert_eq!(narrow.column_of(i), wide.column_of(i), "particle {i}");
        }
        assert_same_sums(&wide, &[&narrow, &mixed], positions, h);
    }
}

/// Sorted lanes: every block's members are its particles, each once, by
/// descending list length (ties in order), `lane_of` their inverse, and the lanes
/// past the particles hold the block's last one; unsorted, the particles' order.
/// Either way the same lists, the same sums in every pass at every width (bit for
/// bit), and fewer slots sorted.
#[test]
fn sorted_lanes_keep_every_list_and_sum_and_take_fewer_slots() {
    // Three blocks and a partial one; a cloud with a denser corner, so that the
    // lists' lengths differ.
    let n = 3 * BLOCK + 40;
    let h = 0.12f32;
    let (mut p, _) = sorted_cloud(n, 9, h);
    for i in 0..n / 3 {
        for axis in p.iter_mut() {
            axis[i] *= 0.4;
        }
    }
    let mut grid = Grid::<3>::new();
    grid.rebuild([&p[0], &p[1], &p[2]], h).unwrap();
    let mut scratch = Vec::new();
    for a in p.iter_mut() {
        grid.reorder(a, &mut scratch).unwrap();
    }
    let positions = [&p[0][..], &p[1][..], &p[2][..]];
    let build = |sort: bool, sifter: Sifter| {
        let mut lists = NeighbourLists {
            sort_lanes: Some(sort),
            ..NeighbourLists::with_sifter(sifter)
        };
        lists.build(&grid, positions, h * h, 8).unwrap();
        lists
    };
    let plain = build(false, Sifter::default());
    for i in 0..n {
        assert_eq!(plain.members(i)[0] as usize, i, "in order");
    }
    let slots = |lists: &NeighbourLists| -> usize {
        (0..n.div_ceil(GROUP))
            .map(|g| lists.group(g * GROUP, 1).1)
            .sum()
    };
    for sifter in sifters() {
        let sorted = build(true, sifter);
        for b in 0..n.div_ceil(BLOCK) {
            let (first, len) = (b * BLOCK, (n - b * BLOCK).min(BLOCK));
            let members = &sorted.members(first)[..BLOCK];
            let mut particles = members[..len].to_vec();
            particles.sort_unstable();
            assert_eq!(
                particles,
                (first as u32..(first + len) as u32).collect::<Vec<_>>()
            );
            assert!(
                members[len..]
                    .iter()
                    .all(|&i| i as usize == first + len - 1)
            );
            let key = |&i: &u32| (core::cmp::Reverse(sorted.of(i as usize).len()), i);
            assert!(members[..len].is_sorted_by_key(key), "block {b}");
            for (lane, &i) in members[..len].iter().enumerate() {
                assert_eq!(sorted.lane_of(i as usize), first + lane);
            }
        }
        for i in 0..n {
            assert_eq!(sorted.column_of(i)[..sorted.of(i).len()], plain.of(i)[..]);
            assert_eq!(sorted.of(i), plain.of(i), "particle {i}");
        }
        assert!(
            slots(&sorted) < slots(&plain),
            "{} against {}",
            slots(&sorted),
            slots(&plain)
        );
        assert_same_sums(&plain, &[&sorted], positions, h);
    }
}

/// A narrow group packs its offsets from the smallest index, its lanes' own
/// included; a group one wider than the span stays as it was.
#[test]
fn a_group_is_narrow_exactly_when_its_span_fits() {
    let own: [u32; GROUP] = core::array::from_fn(|l| 1000 + l as u32);
    let mut columns: Vec<u32> = (0..3 * GROUP).map(|e| 990 + (e as u32 * 7) % 40).collect();
    let before = columns.clone();
    // Smallest 990, largest 1029: a span of 39.
    assert_eq!(narrow(&mut columns, &own, 38), WIDE);
    assert_eq!(columns, before);
    assert_eq!(narrow(&mut columns, &own, 39), 990);
    let offsets: &[u16] = bytemuck::cast_slice(&columns[..3 * GROUP / 2]);
    let unpacked: Vec<u32> = offsets.iter().map(|&o| 990 + u32::from(o)).collect();
    assert_eq!(unpacked, before);
    // The lanes' own indices count: 2000 is past a span of 39 from 990.
    let mut columns = before.clone();
    let far: [u32; GROUP] = core::array::from_fn(|l| if l == 3 { 2000 } else { 1000 });
    assert_eq!(narrow(&mut columns, &far, 1010), 990);
    assert_eq!(narrow(&mut before.clone(), &far, 1009), WIDE);
    // Never past what 16 bits hold, whatever the limit asked.
    let mut spread: Vec<u32> = vec![5; GROUP];
    spread[7] = 5 + 65_536;
    assert_eq!(narrow(&mut spread, &[5; GROUP], u32::MAX), WIDE);
    spread[7] = 5 + 65_535;
    assert_eq!(narrow(&mut spread, &[5; GROUP], u32::MAX), 5);
}

/// Every sifter this CPU runs.
fn sifters() -> Vec<Sifter> {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut all = vec![Sifter::Portable];
    #[cfg(target_arch = "x86_64")]
    if LaneKind::Avx.is_available() {
        all.push(Sifter::Avx);
    }
    #[cfg(target_arch = "x86_64")]
    if Sifter::default() == Sifter::Avx512 {
        all.push(Sifter::Avx512);
    }
    all
}

#[test]
fn the_fastest_sifter_is_the_default() {
    #[cfg(target_arch = "x86_64")]
    {
        let expected = if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            Sifter::Avx512
        } else if std::arch::is_x86_feature_detected!("avx") {
            Sifter::Avx
        } else {
            Sifter::Portable
        };
        assert_eq!(Sifter::default(), expected);
    }
    #[cfg(not(target_arch = "x86_64"))]
    assert_eq!(Sifter::default(), Sifter::Portable);
}

/// Builds the lists of `p` (3D or, with the third axis ignored, 2D) with every
/// sifter and checks that they agree entry for entry.
fn sifters_agree(p: &[Vec<f32>; 3], radius: f32, dimension: usize) {
    fn lists_of<const D: usize>(p: [&[f32]; D], radius: f32, sifter: Sifter) -> Vec<Vec<u32>> {
        let mut grid = Grid::<D>::new();
        grid.rebuild(p, radius).unwrap();
        let sorted: [Vec<f32>; D] = core::array::from_fn(|a| {
            grid.permutation()
                .iter()
                .map(|&k| p[a][k as usize])
                .collect()
        });
        let mut lists = NeighbourLists::with_sifter(sifter);
        lists
            .build(
                &grid,
                core::array::from_fn(|a| &sorted[a][..]),
                radius * radius,
                3,
            )
            .unwrap();
        // Padding included: the transposes of both sifters write the same columns.
        (0..p[0].len()).map(|i| lists.column_of(i)).collect()
    }
    let all: Vec<Vec<Vec<u32>>> = sifters()
        .into_iter()
        .map(|sifter| match dimension {
            2 => lists_of([&p[0][..], &p[1][..]], radius, sifter),
            _ => lists_of([&p[0][..], &p[1][..], &p[2][..]], radius, sifter),
        })
        .collect();
    for other in &all[1..] {
        assert_eq!(
            other,
            &all[0],
            "{dimension}D, {} points, radius {radius}",
            p[0].len()
        );
    }
}

/// The sixteen-wide sifter takes up to four particles of a cell at once, and both
/// sifters from five particles on walk a copy of the cell's candidates in one run:
/// cells of one to nine particles (every way a cell splits into fours, twos and
/// ones, with and without the copy) give the same lists from both, entry for
/// entry.
#[test]
fn cells_of_every_occupancy_give_the_same_lists() {
    let radius = 0.1f32;
    let side = 6;
    let mut next = uniform(7);
    let mut p: [Vec<f32>; 3] = Default::default();
    for c in 0..side * side * side {
        let cell = [c % side, (c / side) % side, c / (side * side)];
        // The middle half of a cell of the lattice, so that the grid's cells (of
        // the same size, wherever their origin) hold about as many.
        for _ in 0..c % 10 {
            for a in 0..3 {
                p[a].push((cell[a] as f32 + 0.25 + 0.5 * next()) * radius);
            }
        }
    }
    let mut grid = Grid::<3>::new();
    grid.rebuild([&p[0], &p[1], &p[2]], radius).unwrap();
    let mut occupancy = [false; 10];
    for cell in grid.cells() {
        occupancy[cell.len().min(9)] = true;
    }
    assert!(
        occupancy[1..].iter().all(|&o| o),
        "cells of every occupancy from 1 to 9: {occupancy:?}"
    );
    sifters_agree(&p, radius, 3);
    sifters_agree(&p, radius, 2);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]
    /// The sixteen-wide sifter (where the CPU has it) and the portable one give the
    /// same lists on random, clustered and lattice clouds of any length (so every
    /// tail length of a candidate range occurs).
    #[test]
    fn sifters_give_the_same_lists(
        n in 0usize..1500,
        seed in 0u64..1000,
        radius in 0.02f32..0.4,
        lattice in proptest::bool::ANY,
    ) {
        let mut p = cloud(n, seed);
        if lattice {
            // Points on a lattice of spacing radius / 2: many pairs at exactly the
            // radius, where a different rounding would flip the predicate.
            let side = (n as f64).cbrt().ceil() as usize;
            for i in 0..n {
                let c = [i % side, (i / side) % side, i / (side * side)];
                for a in 0..3 {
                    p[a][i] = c[a] as f32 * radius * 0.5;
                }
            }
        }
        sifters_agree(&p, radius, 3);
        sifters_agree(&p, radius, 2);
    }
}

#[test]
fn room_is_a_multiple_of_the_rest_neighbours() {
    // 3D, h = 2 s: 4/3 pi 8 = 33.5 lattice points, times 1.5.
    assert_eq!(room_per_particle::<3>(2.0, 1.0), 52);
    // 2D: pi 4 = 12.6, times 2.
    assert_eq!(room_per_particle::<2>(2.0, 1.0), 27);
}

#[test]
fn columns_pad_with_the_particle_itself() {
    let p = [vec![0.0f32, 0.05, 0.1, 0.5], vec![0.0; 4]];
    let mut grid = Grid::<2>::new();
    grid.rebuild([&p[0], &p[1]], 0.12).unwrap();
    let sorted: [Vec<f32>; 2] = core::array::from_fn(|a| {
        grid.permutation()
            .iter()
            .map(|&k| p[a][k as usize])
            .collect()
    });
    let mut lists = NeighbourLists::default();
    lists
        .build(&grid, [&sorted[0], &sorted[1]], 0.12 * 0.12, 0)
        .unwrap();
    let mut quads = Vec::new();
    pack(
        &mut quads,
        [&sorted[0], &sorted[1]],
        &[0.0; 4][..sorted[0].len()],
    );
    let nb = Neighbourhood::<2> {
        lists: &lists,
        quads: &quads,
    };
    let mut seen = 0;
    nb.for_each_slot::<f32x8>(0, |indices, x, r2, _| {
        let r2 = r2.to_array();
        for i in 0..8 {
            if i >= 4 {
                // Past the particles: the last particle, masked.
                assert_eq!(indices.indices()[i], 3);
                assert!(r2[i].is_infinite());
            } else if r2[i].is_finite() {
                assert!(r2[i] < 0.12 * 0.12);
                seen += 1;
            } else {
                assert_eq!(indices.indices()[i], i as u32, "padded with itself");
                assert_eq!(x[0].to_array()[i], 0.0);
            }
        }
    });
    // 0-0.05, 0.05-0.1, 0-0.1: three pairs, each seen from both ends.
    assert_eq!(seen, 6);
}
