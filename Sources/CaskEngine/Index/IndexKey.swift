import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A key of the index. Keys compare by their exact UTF-8 bytes, not by Unicode canonical
/// equivalence as `String` does: "é" written as one code point and as "e" + accent are two
/// keys, as they are two byte strings on disk. Swift stores keys of up to 15 UTF-8 bytes inline
/// (Swift's small-string form), so they cost no allocation.
struct IndexKey: Hashable, Sendable {
  let string: String

  init(_ string: String) {
    self.string = string
  }

  static func == (lhs: IndexKey, rhs: IndexKey) -> Bool {
    let left = lhs.string.utf8
    let right = rhs.string.utf8
    // UTF8View.count is O(1) for native strings; comparing contiguous bytes with memcmp is far
    // cheaper than iterating the views (a profile of open put 31% in elementsEqual).
    guard left.count == right.count else { return false }
    let compared = left.withContiguousStorageIfAvailable { a in
      right.withContiguousStorageIfAvailable { b in
        a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
      }
    }
    if let compared, let equal = compared { return equal }
    return left.elementsEqual(right)
  }

  /// Runs `body` with the key's contiguous UTF-8 bytes (copied first for a bridged string).
  static func withUTF8<Result>(of string: String, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
    -> Result
  {
    if let result = try string.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
      return result
    }
    return try Array(string.utf8).withUnsafeBytes(body)
  }

  func hash(into hasher: inout Hasher) {
    let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
      hasher.combine(bytes: UnsafeRawBufferPointer($0))
    }
    if hashed == nil {
      var copy = string
      copy.makeContiguousUTF8()
      copy.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
  }
}
