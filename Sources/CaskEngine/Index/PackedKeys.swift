/// Keys as UTF-8 bytes back to back in one buffer, with where each ends: what
/// `CaskStore.packedKeys(inGroup:)` hands a layer that builds its own structures from many
/// keys, without a `String` or an allocation per key.
package struct PackedKeys: Sendable {
  /// The keys' bytes, one after another.
  package private(set) var bytes: [UInt8] = []
  /// Where each key ends in `bytes`; key `i` starts where key `i - 1` ends.
  package private(set) var ends: [Int] = []

  package init() {}

  /// Number of keys.
  package var count: Int { ends.count }

  /// Where key `index` lies in `bytes`.
  package func range(of index: Int) -> Range<Int> {
    (index == 0 ? 0 : ends[index - 1])..<ends[index]
  }

  mutating func reserveCapacity(keys: Int) {
    ends.reserveCapacity(keys)
  }

  mutating func append(_ key: UnsafeRawBufferPointer) {
    bytes.append(contentsOf: key)
    ends.append(bytes.count)
  }
}
