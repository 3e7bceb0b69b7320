import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// CRC-32C: the published check values, and the processor's instruction (where there is one)
/// against the lookup tables on every length and alignment a record can start at.
@Suite("CRC-32C gives the same checksums on every path")
struct CRC32CTests {
  /// The checksum one bit at a time: slow, but too plain to be wrong.
  private static func bitwise(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
    var state = ~crc
    for byte in bytes {
      state ^= UInt32(byte)
      for _ in 0..<8 { state = state & 1 == 1 ? (state >> 1) ^ 0x82F6_3B78 : state >> 1 }
    }
    return ~state
  }

  @Test("the published check values (RFC 3720, B.4, and \"123456789\")")
  func knownVectors() {
    let vectors: [(bytes: [UInt8], crc: UInt32)] = [
      (Array("123456789".utf8), 0xE306_9283),
      ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
      ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
      ((0..<32).map { UInt8($0) }, 0x46DD_794E),
      ((0..<32).map { UInt8(31 - $0) }, 0x113F_DB5C),
      ([], 0),
    ]
    for (bytes, crc) in vectors {
      #expect(CRC32C.checksum(bytes) == crc, "\(bytes.count) bytes")
      #expect(bytes.withUnsafeBytes { CRC32C.softwareChecksum($0) } == crc, "\(bytes.count) bytes, tables")
      #expect(Self.bitwise(bytes) == crc, "\(bytes.count) bytes, bitwise")
    }
  }

  @Test("random buffers of every length 0 to 300, at every start offset 0 to 7, match the tables")
  func everyLengthAndAlignment() {
    var random = SeededRandom.make(test: "CRC32CTests.everyLengthAndAlignment")
    for _ in 0..<testIterations(2) {
      let buffer = [UInt8](random.bytes(300 + 8))
      let seed = UInt32.random(in: 0...UInt32.max, using: &random)
      buffer.withUnsafeBytes { all in
        for start in 0..<8 {
          for length in 0...300 {
            let bytes = UnsafeRawBufferPointer(rebasing: all[start..<start + length])
            let expected = CRC32C.softwareChecksum(bytes, continuing: seed)
            #expect(CRC32C.checksum(bytes, continuing: seed) == expected, "start \(start), length \(length)")
            if start == 0 && length % 37 == 0 {
              #expect(Self.bitwise(Array(bytes), continuing: seed) == expected, "length \(length), bitwise")
            }
          }
        }
      }
    }
  }

  @Test("a checksum continued over two pieces equals the checksum of the whole")
  func continuation() {
    var random = SeededRandom.make(test: "CRC32CTests.continuation")
    for _ in 0..<testIterations(200) {
      let bytes = [UInt8](random.bytes(Int.random(in: 0...2048, using: &random)))
      let split = Int.random(in: 0...bytes.count, using: &random)
      let whole = CRC32C.checksum(bytes)
      let first = CRC32C.checksum(bytes[..<split])
      let continued = bytes[split...].withUnsafeBytes { CRC32C.checksum($0, continuing: first) }
      #expect(continued == whole, "\(bytes.count) bytes split at \(split)")
    }
  }

  @Test("x86_64 processors with SSE4.2 use the instruction")
  func hardwarePathChosen() throws {
    #if arch(x86_64)
      let flags = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
      try #require(!flags.isEmpty, "no /proc/cpuinfo")
      #expect(CRC32C.usesHardware == flags.contains(" sse4_2"))
    #else
      #expect(!CRC32C.usesHardware)
    #endif
  }
}
