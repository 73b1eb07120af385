//! The run-time dispatcher: which lane types this CPU runs, and a pass run on one.

use super::{Eight, Lane};
use crate::KernelError;
use wide::f32x8;

/// The lane backends, widest first.
///
/// ```
/// use pbf_kernels::LaneKind;
/// // The scalar and portable backends run on every CPU.
/// assert!(LaneKind::Scalar.is_available() && LaneKind::Portable.is_available());
/// let widest = LaneKind::widest();
/// assert!(widest.is_available() && [8, 16].contains(&widest.width()));
/// println!("this CPU runs {} lanes of {}", widest.width(), widest.name());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaneKind {
    /// Sixteen lanes in one AVX-512 register (x86-64 CPUs with AVX-512F).
    Avx512,
    /// Eight lanes in one AVX register (x86-64 CPUs with AVX).
    Avx,
    /// Eight lanes of `wide`'s [`f32x8`], whose instructions the build's target
    /// features choose (two SSE2 registers in a default x86-64 build, NEON on aarch64):
    /// every CPU.
    Portable,
    /// One lane: the scalar reference itself, every CPU.
    Scalar,
}

/// A pass to run on one lane type: [`LaneKind::dispatch`] calls [`run`](Self::run)
/// with the type the kind names.
pub trait WithLane {
    /// What the pass returns.
    type Output;
    /// Runs the pass on lanes of type `L`. Wrap the hot loops in [`Lane::run`], which
    /// compiles them for `L`'s instructions.
    fn run<L: Lane>(self) -> Self::Output;
}

/// A pass to run on an eight-lane type with bit-mask comparisons
/// ([`LaneKind::dispatch_eight`]).
pub trait WithEight {
    /// What the pass returns.
    type Output;
    /// Runs the pass on lanes of type `E`.
    fn run<E: Eight>(self) -> Self::Output;
}

impl LaneKind {
    /// Every backend, widest first.
    pub const ALL: [LaneKind; 4] = [
        LaneKind::Avx512,
        LaneKind::Avx,
        LaneKind::Portable,
        LaneKind::Scalar,
    ];

    /// How many particles one value holds.
    pub fn width(self) -> usize {
        match self {
            LaneKind::Avx512 => 16,
            LaneKind::Avx | LaneKind::Portable => 8,
            LaneKind::Scalar => 1,
        }
    }

    /// The backend's name: `"avx512f"`, `"avx"`, `"f32x8"` or `"scalar"`.
    pub fn name(self) -> &'static str {
        match self {
            LaneKind::Avx512 => "avx512f",
            LaneKind::Avx => "avx",
            LaneKind::Portable => "f32x8",
            LaneKind::Scalar => "scalar",
        }
    }

    /// Whether this CPU runs the backend (checked at run time, once per process by
    /// the standard library's feature cache).
    pub fn is_available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            LaneKind::Avx512 => super::avx512::available(),
            #[cfg(target_arch = "x86_64")]
            LaneKind::Avx => super::avx::available(),
            #[cfg(not(target_arch = "x86_64"))]
            LaneKind::Avx512 | LaneKind::Avx => false,
            LaneKind::Portable | LaneKind::Scalar => true,
        }
    }

    /// The widest backend this CPU runs.
    pub fn widest() -> LaneKind {
        Self::ALL
            .into_iter()
            .find(|k| k.is_available())
            .unwrap_or(LaneKind::Scalar)
    }

    /// The fastest eight-lane backend this CPU runs: [`LaneKind::Avx`] where the CPU has
    /// AVX, else [`LaneKind::Portable`].
    pub fn widest_eight() -> LaneKind {
        if LaneKind::Avx.is_available() {
            LaneKind::Avx
        } else {
            LaneKind::Portable
        }
    }

    /// Reports that a test skipped this backend: one line on the standard error
    /// stream, once per process and backend, written past a test harness's output
    /// capture so that `cargo test` shows it.
    pub fn report_skipped(self) {
        use std::io::Write;
        use std::sync::atomic::{AtomicBool, Ordering};
        static REPORTED: [AtomicBool; 4] = [const { AtomicBool::new(false) }; 4];
        let index = Self::ALL.iter().position(|&k| k == self).unwrap_or(0);
        if !REPORTED[index].swap(true, Ordering::Relaxed) {
            let line = format!(
                "skipped: the {} lanes (this CPU does not run them)\n",
                self.name()
            );
            // Nothing to do when the stream is closed: the report is informative.
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }

    /// Runs `pass` on this backend's lane type.
    ///
    /// # Errors
    /// [`KernelError::LanesUnavailable`] when this CPU does not run the backend.
    #[inline]
    pub fn dispatch<W: WithLane>(self, pass: W) -> Result<W::Output, KernelError> {
        if !self.is_available() {
            return Err(KernelError::LanesUnavailable { lanes: self.name() });
        }
        Ok(match self {
            #[cfg(target_arch = "x86_64")]
            LaneKind::Avx512 => pass.run::<super::avx512::F32x16>(),
            #[cfg(target_arch = "x86_64")]
            LaneKind::Avx => pass.run::<super::avx::F32x8Avx>(),
            #[cfg(not(target_arch = "x86_64"))]
            LaneKind::Avx512 | LaneKind::Avx => unreachable!("not available off x86-64"),
            LaneKind::Portable => pass.run::<f32x8>(),
            LaneKind::Scalar => pass.run::<f32>(),
        })
    }

    /// Runs `pass` on this backend's eight-lane type.
    ///
    /// # Errors
    /// [`KernelError::LanesUnavailable`] when this CPU does not run the backend, or
    /// the backend is not eight lanes wide ([`LaneKind::Avx`] and
    /// [`LaneKind::Portable`] are).
    #[inline]
    pub fn dispatch_eight<W: WithEight>(self, pass: W) -> Result<W::Output, KernelError> {
        match self {
            #[cfg(target_arch = "x86_64")]
            LaneKind::Avx if self.is_available() => Ok(pass.run::<super::avx::F32x8Avx>()),
            LaneKind::Portable => Ok(pass.run::<f32x8>()),
            _ => Err(KernelError::LanesUnavailable { lanes: self.name() }),
        }
    }
}

/// Runs a body once for every lane type this CPU runs (each as the type parameter
/// named after the bar), and reports the name of every backend it skips
/// ([`LaneKind::report_skipped`]), so that a test never passes silently for a backend
/// it did not run. Values the body needs
/// come in as `let name: type = value;` lines before it (references may use the
/// lifetime `'a`).
///
/// ```
/// use pbf_kernels::{Kernel, Lane};
/// let kernel = Kernel::<3>::new(1.0)?;
/// pbf_kernels::for_each_lane! {
///     let kernel: &'a Kernel<3> = &kernel;
///     |L| {
///         let mut out = [0.0f32; pbf_kernels::MAX_WIDTH];
///         L::poly6(kernel, L::splat(0.25)).store(&mut out[..L::WIDTH]);
///         assert!(out[..L::WIDTH].iter().all(|w| *w == kernel.poly6(0.25)));
///     }
/// }
/// # Ok::<(), pbf_kernels::KernelError>(())
/// ```
#[macro_export]
macro_rules! for_each_lane {
    ($(let $name:ident : $ty:ty = $value:expr;)* |$lane:ident| $body:block) => {{
        #[allow(non_camel_case_types, dead_code)]
        struct __ForEachLane<'a> {
            $( $name: $ty, )*
            __lifetime: ::core::marker::PhantomData<&'a ()>,
        }
        impl $crate::WithLane for __ForEachLane<'_> {
            type Output = ();
            #[allow(unused_variables)]
            fn run<$lane: $crate::Lane>(self) {
                let __ForEachLane { $( $name, )* .. } = self;
                $body
            }
        }
        for kind in $crate::LaneKind::ALL {
            let pass = __ForEachLane {
                $( $name: $value, )*
                __lifetime: ::core::marker::PhantomData,
            };
            if kind.dispatch(pass).is_err() {
                kind.report_skipped();
            }
        }
    }};
}
