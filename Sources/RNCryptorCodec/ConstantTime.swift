import Foundation

/// Compares two byte buffers without an early exit, so the time taken does not reveal where
/// they first differ. Buffers of different lengths are unequal (lengths are not secret here:
/// every MAC this codec compares is 32 bytes).
///
/// This is the only function in CipherCask that compares MACs or verifiers.
///
/// - Complexity: O(n), touching every byte of the shorter buffer whatever the contents.
public func constantTimeEqual(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
  guard lhs.count == rhs.count else { return false }
  var difference: UInt8 = 0
  for index in 0..<lhs.count {
    difference |= lhs[index] ^ rhs[index]
  }
  return difference == 0
}

/// `constantTimeEqual` for any two contiguous byte collections (`Data`, `[UInt8]`).
public func constantTimeEqual<A: ContiguousBytes, B: ContiguousBytes>(_ lhs: A, _ rhs: B) -> Bool {
  lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in constantTimeEqual(left, right) } }
}
