import CaskTestSupport
import Foundation

/// Random shapes for property tests, all drawn from a `SeededRandom` so a failure replays.
enum RandomInputs {
  /// The largest plaintext the property tests make.
  static let maximumPlaintextLength = 1 << 20

  /// A plaintext length in 0...1 MiB, biased towards where padding bugs live: 40 % small
  /// (0...64), 30 % one byte either side of a block boundary, 23 % medium, 7 % large.
  static func plaintextLength(using random: inout SeededRandom) -> Int {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<40:
      return Int.random(in: 0...64, using: &random)
    case 40..<70:
      let blocks = Int.random(in: 0...300, using: &random)
      return Swift.max(0, blocks * 16 + Int.random(in: -1...1, using: &random))
    case 70..<93:
      return Int.random(in: 65...65_536, using: &random)
    default:
      return Int.random(in: 65_537...maximumPlaintextLength, using: &random)
    }
  }

  /// Splits `total` bytes into chunk lengths that sum to `total`, mixing empty and one-byte
  /// chunks with small, medium and large ones, so chunk edges fall inside the header, the
  /// ciphertext blocks and the HMAC.
  static func chunkLengths(total: Int, using random: inout SeededRandom) -> [Int] {
    let large = Swift.max(4_097, total / 8)
    var lengths: [Int] = []
    var remaining = total
    while remaining > 0 {
      let length: Int
      switch Int.random(in: 0..<10, using: &random) {
      case 0: length = 0
      case 1: length = 1
      case 2..<5: length = Int.random(in: 2...48, using: &random)
      case 5..<8: length = Int.random(in: 49...4_096, using: &random)
      default: length = Int.random(in: 4_097...large, using: &random)
      }
      lengths.append(Swift.min(length, remaining))
      remaining -= lengths[lengths.count - 1]
    }
    if Bool.random(using: &random) { lengths.insert(0, at: 0) }
    return lengths
  }

  /// A non-empty password of ASCII, accented Latin, CJK and emoji scalars.
  static func password(using random: inout SeededRandom) -> String {
    let ranges: [ClosedRange<UInt32>] = [0x21...0x7E, 0xC0...0xFF, 0x4E00...0x9FFF, 0x1F600...0x1F64F]
    var scalars = String.UnicodeScalarView()
    for _ in 0..<Int.random(in: 1...24, using: &random) {
      let range = ranges[Int.random(in: 0..<ranges.count, using: &random)]
      if let scalar = Unicode.Scalar(UInt32.random(in: range, using: &random)) { scalars.append(scalar) }
    }
    return scalars.isEmpty ? "x" : String(scalars)
  }
}
