internal import CProcessControl

/// The processors a process may use, read without Foundation.
///
/// Why not `ProcessInfo.activeProcessorCount`: its first use in a process builds
/// `ProcessInfo.processInfo` (the environment, the arguments, the host) and reads the control
/// group's CPU quota files, which made up about a seventh of the first open of a store in a
/// fresh process. The affinity mask is one system call; it does not see a control group's CPU
/// quota, which only makes extra sealing lanes take turns on the cores the quota allows.
package enum Processors {
  /// The CPUs in the calling thread's affinity mask, at least 1.
  package static var usable: Int { max(1, Int(cask_process_usable_cpus())) }
}
