#if canImport(Glibc)
  import Glibc
#endif

extension KeyTable {
  /// The table's slots: one block of `capacity` 32-byte slots, zeroed (empty) when made or
  /// another's copied.
  final class Storage: @unchecked Sendable {
    let capacity: Int
    let slots: UnsafeMutableRawPointer?
    /// The pages still to load from a checkpoint (`KeyTable+Lazy.swift`); `nil` for a table
    /// whose slots are all here.
    let lazy: LazyPages?

    /// Tables from this size on are aligned to 2 MiB and offered to the kernel for huge pages:
    /// every lookup lands on a random slot, and with 4 KiB pages most of them also miss the TLB.
    static let hugePageLength = 2 << 20

    /// `capacity` empty slots or, with `lazy`, slots left as they are allocated, each page
    /// written whole by its load before anything reads it (pages never touched cost nothing).
    convenience init(capacity: Int, lazy: LazyPages? = nil) {
      self.init(capacity: capacity, lazy: lazy, copying: nil)
    }

    /// `capacity` slots that are a copy of `source`'s (which has as many), written once.
    /// Prevents: a copy of a large table zeroing its whole new block first, a second pass over
    /// it (64 MiB at a million keys) that the copy then overwrites.
    private convenience init(copyOf source: Storage) {
      self.init(capacity: source.capacity, lazy: nil, copying: source.slots.map { UnsafeRawPointer($0) })
    }

    private init(capacity: Int, lazy: LazyPages?, copying source: UnsafeRawPointer?) {
      self.capacity = capacity
      self.lazy = lazy
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
        // Not for a table loaded page by page: a huge page would make the first touch of one
        // page of slots zero 2 MiB. Offered once every page is loaded (`adviseHugePages`).
        if alignment == Self.hugePageLength && lazy == nil { _ = madvise(pointer, bytes, MADV_HUGEPAGE) }
      #else
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
      #endif
      if let source {
        pointer.copyMemory(from: source, byteCount: bytes)
      } else if lazy == nil {
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
      }
      slots = pointer
    }

    /// Offers a table aligned for huge pages to the kernel's huge pages (advice only).
    func adviseHugePages() {
      #if canImport(Glibc)
        let bytes = capacity * KeyTable.slotLength
        if let slots, bytes >= 2 * Self.hugePageLength { _ = madvise(slots, bytes, MADV_HUGEPAGE) }
      #endif
    }

    deinit {
      #if canImport(Glibc)
        free(slots)
      #else
        slots?.deallocate()
      #endif
    }

    func copy() -> Storage {
      if let lazy { return lazy.copy(of: self) }
      return Storage(copyOf: self)
    }
  }
}
