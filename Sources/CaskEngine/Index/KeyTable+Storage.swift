#if canImport(Glibc)
  import Glibc
#endif

extension KeyTable {
  /// The table's slots: one block of `capacity` 32-byte slots, zeroed (empty) when made.
  final class Storage: @unchecked Sendable {
    let capacity: Int
    let slots: UnsafeMutableRawPointer?

    /// Tables from this size on are aligned to 2 MiB and offered to the kernel for huge pages:
    /// every lookup lands on a random slot, and with 4 KiB pages most of them also miss the TLB.
    static let hugePageLength = 2 << 20

    init(capacity: Int) {
      self.capacity = capacity
      guard capacity > 0 else {
        slots = nil
        return
      }
      let bytes = capacity * KeyTable.slotLength
      #if canImport(Glibc)
        // Allocated with the C allocator (freed with `free`), so that a large table can be
        // aligned for huge pages.
        var pointer: UnsafeMutableRawPointer?
        let alignment = bytes >= 2 * Self.hugePageLength ? Self.hugePageLength : 16
        guard posix_memalign(&pointer, alignment, bytes) == 0, let pointer else {
          fatalError("KeyTable: out of memory for \(bytes) bytes")
        }
        // Advice only: without huge pages the table works the same.
        if alignment == Self.hugePageLength { _ = madvise(pointer, bytes, MADV_HUGEPAGE) }
      #else
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
      #endif
      pointer.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
      slots = pointer
    }

    deinit {
      #if canImport(Glibc)
        free(slots)
      #else
        slots?.deallocate()
      #endif
    }

    func copy() -> Storage {
      let copy = Storage(capacity: capacity)
      if let slots, let target = copy.slots {
        target.copyMemory(from: slots, byteCount: capacity * KeyTable.slotLength)
      }
      return copy
    }
  }
}
