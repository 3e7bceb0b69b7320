import Foundation

/// What the figures were measured on, printed with every table and written to every report.
struct Machine: Codable {
  /// The CPU's model name from /proc/cpuinfo.
  let cpuModel: String
  /// Cores this process may use.
  let cores: Int
  /// `openssl version`: the tool that measures the bounds, and its libcrypto.
  let openSSL: String

  static func current() -> Machine {
    Machine(cpuModel: cpuModel(), cores: ProcessInfo.processInfo.activeProcessorCount, openSSL: openSSLVersion())
  }

  /// One line: `AMD EPYC, 2 cores, OpenSSL 3.0.19 ...`.
  var summary: String {
    "\(cpuModel), \(cores) cores, \(openSSL)"
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
