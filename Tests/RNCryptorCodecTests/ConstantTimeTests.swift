import Foundation
import RNCryptorCodec
import Testing

/// `constantTimeEqual` is the one MAC comparison in CipherCask. Prevents a comparison that
/// stops at the first or ignores the last byte, or calls a prefix equal.
@Suite("Constant-time comparison")
struct ConstantTimeTests {
  private let mac = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) })

  private func changing(_ data: Data, at index: Int) -> Data {
    var copy = data
    copy[index] ^= 0x01
    return copy
  }

  @Test("equal buffers are equal, in every pairing of Data and [UInt8]")
  func equal() {
    #expect(constantTimeEqual(mac, Data(mac)))
    #expect(constantTimeEqual(mac, Array(mac)))
    #expect(constantTimeEqual(Array(mac), mac))
  }

  @Test("a difference in the first, a middle or the last byte makes them unequal", arguments: [0, 16, 31])
  func differOneByte(index: Int) {
    #expect(!constantTimeEqual(mac, changing(mac, at: index)))
    #expect(!constantTimeEqual(changing(mac, at: index), mac))
  }

  @Test("every single-bit difference is seen")
  func everyBit() {
    for index in 0..<mac.count {
      for bit in 0..<8 {
        var other = mac
        other[index] ^= UInt8(1) << bit
        #expect(!constantTimeEqual(mac, other), "byte \(index) bit \(bit)")
      }
    }
  }

  @Test("different lengths are unequal, a prefix included")
  func differentLengths() {
    #expect(!constantTimeEqual(mac, mac.prefix(31)))
    #expect(!constantTimeEqual(mac.prefix(31), mac))
    #expect(!constantTimeEqual(mac, mac + Data([0])))
    #expect(!constantTimeEqual(Data(count: 32), Data(count: 33)))
  }

  @Test("empty buffers are equal to each other and to nothing else")
  func empty() {
    #expect(constantTimeEqual(Data(), [UInt8]()))
    #expect(
      constantTimeEqual(UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0)))
    #expect(!constantTimeEqual(Data(), Data([0])))
    #expect(!constantTimeEqual([UInt8](), mac))
  }

  @Test("slices compare by content, not by index")
  func slices() {
    let buffer = Data([0xFF]) + mac + Data([0xEE])
    #expect(constantTimeEqual(buffer[1..<33], mac))
    #expect(!constantTimeEqual(buffer[0..<32], mac))
  }

  @Test("SecureBytes.constantTimeEquals agrees")
  func secureBytes() {
    #expect(SecureBytes(mac).constantTimeEquals(SecureBytes(mac)))
    #expect(!SecureBytes(mac).constantTimeEquals(SecureBytes(changing(mac, at: 31))))
    #expect(!SecureBytes(mac).constantTimeEquals(SecureBytes(mac.prefix(16))))
  }
}
