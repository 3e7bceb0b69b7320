import Foundation

/// What the figures were measured on, printed with every table and written to every report.
struct Machine: Codable {
  /// The CPU's model name from /proc/cpuinfo.
  let cpuModel: String
  /// Cores this process may use.
  let cores: Int
  /// `openssl version`: the tool that measures the bounds, and its libcrypto.
  let openSSL: String
  /// Physical memory, in bytes (`nil` in reports written before it was recorded).
  let memoryBytes: UInt64?
  /// The kernel's release (`uname -r`).
  let kernel: String?

  static func current() -> Machine {
    Machine(
      cpuModel: cpuModel(), cores: ProcessInfo.processInfo.activeProcessorCount, openSSL: openSSLVersion(),
      memoryBytes: ProcessInfo.processInfo.physicalMemory, kernel: kernelRelease())
  }

  /// One line: `AMD EPYC, 2 cores, 23 GiB, Linux 6.1.0, OpenSSL 3.0.19`. OpenSSL's version
  /// line ends with its release date; the line names the version only.
  var summary: String {
    let memory = memoryBytes.map { ", \($0 >> 30) GiB" } ?? ""
    let release = kernel.map { ", Linux \($0)" } ?? ""
    let version = openSSL.split(separator: " ").prefix(2).joined(separator: " ")
    return "\(cpuModel), \(cores) cores\(memory)\(release), \(version)"
  }

  private static func kernelRelease() -> String {
    let text = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? ""
    let release = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return release.isEmpty ? "unknown" : release
  }

  private static func cpuModel() -> String {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
    for line in text.split(separator: "\n") where line.hasPrefix("model name") {
      if let colon = line.firstIndex(of: ":") {
        return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      }
    }
    return "unknown CPU"
  }

  private static func openSSLVersion() -> String {
    let output = (try? Subprocess.output("openssl", ["version"])) ?? ""
    let version = output.trimmingCharacters(in: .whitespacesAndNewlines)
    return version.isEmpty ? "openssl not found" : version
  }
}
