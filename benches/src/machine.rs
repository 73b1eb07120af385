//! Which CPU a bench ran on, printed at the top of every report.
//!
//! The benches often run on shared virtual machines whose host CPU is not fixed. Core
//! generations differ in ways that move every figure: AMD Zen 5 (family 26) executes
//! a 512-bit instruction in one go, Zen 4 (family 25) splits it into two 256-bit
//! halves, so the same binary can take 1.3-1.7 times as long a step on the one as on
//! the other. A figure is only comparable with another taken on the same kind of
//! core, so the benches print it.

/// The CPU as `/proc/cpuinfo` describes its first logical processor.
#[derive(Clone, Debug, PartialEq)]
pub struct Cpu {
    /// `vendor_id`, such as `AuthenticAMD` or `GenuineIntel`.
    pub vendor: String,
    /// `model name`, as the hypervisor passes it on (often without the generation).
    pub model_name: String,
    /// `cpu family`, decimal.
    pub family: u32,
    /// `model`, decimal.
    pub model: u32,
    /// The logical processors listed (`processor` entries).
    pub logical: usize,
    /// `cpu MHz`, when given (under KVM the nominal clock, not the boost clock).
    pub mhz: Option<f64>,
    /// Whether `flags` lists `avx512f`.
    pub avx512f: bool,
}

impl Cpu {
    /// Reads `text` in the format of Linux's `/proc/cpuinfo`; `None` when any of
    /// `vendor_id`, `model name`, `cpu family` or `model` is missing or malformed.
    ///
    /// ```
    /// use pbf_benches::machine::Cpu;
    /// let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\
    ///             model\t\t: 17\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.144\n\
    ///             flags\t\t: fpu avx2 avx512f\n\nprocessor\t: 1\n";
    /// let cpu = Cpu::from_cpuinfo(text).unwrap();
    /// assert_eq!((cpu.family, cpu.model, cpu.logical), (25, 17, 2));
    /// assert_eq!((cpu.mhz, cpu.avx512f), (Some(2596.144), true));
    /// assert_eq!(cpu.core(), Some("Zen 4"));
    /// assert_eq!(Cpu::from_cpuinfo("processor\t: 0\n"), None);
    /// ```
    pub fn from_cpuinfo(text: &str) -> Option<Self> {
        let field = |name: &str| {
            text.lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(key, _)| key.trim() == name)
                .map(|(_, value)| value.trim().to_string())
        };
        Some(Self {
            vendor: field("vendor_id")?,
            model_name: field("model name")?,
            family: field("cpu family")?.parse().ok()?,
            model: field("model")?.parse().ok()?,
            logical: text
                .lines()
                .filter(|line| line.split(':').next().map(str::trim) == Some("processor"))
                .count(),
            mhz: field("cpu MHz").and_then(|v| v.parse().ok()),
            avx512f: field("flags").is_some_and(|f| f.split(' ').any(|x| x == "avx512f")),
        })
    }

    /// This machine's CPU (Linux only; `None` elsewhere or when the file is unreadable).
    pub fn this_machine() -> Option<Self> {
        Self::from_cpuinfo(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
    }

    /// The AMD core generation of the family and model, where known: the generations
    /// differ in how they execute 512-bit instructions (Zen 4 in two 256-bit halves,
    /// Zen 5 server parts at full width), which moves every figure of the benches.
    ///
    /// ```
    /// use pbf_benches::machine::Cpu;
    /// let amd = |family, model| Cpu {
    ///     vendor: "AuthenticAMD".into(),
    ///     model_name: "AMD EPYC".into(),
    ///     family,
    ///     model,
    ///     logical: 2,
    ///     mhz: None,
    ///     avx512f: true,
    /// };
    /// assert_eq!(amd(26, 2).core(), Some("Zen 5"));
    /// assert_eq!(amd(25, 1).core(), Some("Zen 3"));
    /// assert_eq!(amd(25, 0xa0).core(), Some("Zen 4"));
    /// assert_eq!(Cpu { vendor: "GenuineIntel".into(), ..amd(6, 143) }.core(), None);
    /// ```
    pub fn core(&self) -> Option<&'static str> {
        if self.vendor != "AuthenticAMD" {
            return None;
        }
        match (self.family, self.model) {
            (23, _) => Some("Zen, Zen+ or Zen 2"),
            (25, 0x10..=0x1f | 0x60..=0x7f | 0xa0..=0xaf) => Some("Zen 4"),
            (25, _) => Some("Zen 3"),
            (26, _) => Some("Zen 5"),
            _ => None,
        }
    }

    /// Single-precision FLOP per core and cycle at the widest vectors, with how that
    /// comes about: 32 on Zen 2 to Zen 4 (two 256-bit FMA pipes; Zen 4 runs a 512-bit
    /// FMA through both halves), 64 on Zen 5 (two 512-bit FMA pipes), and 64 assumed
    /// for other CPUs.
    ///
    /// ```
    /// use pbf_benches::machine::Cpu;
    /// let zen4 = Cpu::from_cpuinfo(
    ///     "vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 17\nmodel name : AMD EPYC\n",
    /// )
    /// .unwrap();
    /// assert_eq!(zen4.peak_flop_per_cycle().0, 32);
    /// ```
    pub fn peak_flop_per_cycle(&self) -> (u32, &'static str) {
        match self.core() {
            Some("Zen 5") => (64, "2 x 512-bit FMA pipes"),
            Some(_) => (32, "2 x 256-bit FMA pipes; a 512-bit FMA takes both halves"),
            None => (64, "assumed: 2 x 512-bit FMA pipes"),
        }
    }
}

impl core::fmt::Display for Cpu {
    /// `AMD EPYC (AuthenticAMD family 25 model 17, Zen 4), 2 logical CPUs`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} ({} family {} model {}",
            self.model_name, self.vendor, self.family, self.model
        )?;
        if let Some(core) = self.core() {
            write!(f, ", {core}")?;
        }
        write!(f, "), {} logical CPUs", self.logical)
    }
}

/// One line for a bench's report: the CPU, or that it could not be read.
///
/// ```
/// assert!(pbf_benches::machine::describe().starts_with("CPU: "));
/// ```
pub fn describe() -> String {
    match Cpu::this_machine() {
        Some(cpu) => format!("CPU: {cpu}"),
        None => "CPU: unknown (no readable /proc/cpuinfo)".to_string(),
    }
}
