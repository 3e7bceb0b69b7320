import CaskPlatform
import Foundation
import Testing

@testable import CaskEngine

/// The processor count the sealing lanes are sized by, read from the affinity mask, against
/// the kernel's own list of the CPUs this process may run on.
@Suite struct ProcessorsTests {
  /// The CPUs `Cpus_allowed_list` in /proc/self/status names ("0-3,8,10-11" style).
  private func allowedByProc() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
    let list = try #require(line.split(separator: ":").last).trimmingCharacters(in: .whitespaces)
    var count = 0
    for range in list.split(separator: ",") {
      let bounds = range.split(separator: "-").compactMap { Int($0) }
      let first = try #require(bounds.first)
      count += (bounds.last ?? first) - first + 1
    }
    return count
  }

  @Test func usableProcessorsAreTheAffinityMask() throws {
    #expect(Processors.usable == (try allowedByProc()))
  }

  @Test func sealingLanesDefaultToTheUsableProcessorsUpToFour() throws {
    #expect(SealingLanes.defaultLimit == min(4, try allowedByProc()))
  }
}
