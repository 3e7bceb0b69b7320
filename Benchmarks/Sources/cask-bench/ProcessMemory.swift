import Foundation

#if canImport(CLinuxSystem)
  import CLinuxSystem
#endif

/// This process's heap, beside `ProcessFigures.currentRSS()`, for figures such as the index's
/// bytes per key (glibc only; elsewhere the figure is 0 and nothing is released).
enum ProcessMemory {
  /// Bytes malloc has handed out and not had back: in use in every arena plus mmap'd blocks
  /// (`mallinfo2`). Unlike RSS, it does not count freed memory malloc keeps for later.
  static func heapBytesInUse() -> Int {
    #if canImport(CLinuxSystem)
      let info = mallinfo2()
      return Int(info.uordblks + info.hblkhd)
    #else
      return 0
    #endif
  }

  /// Hands freed memory back to the system (`malloc_trim`), so that a following RSS reading
  /// counts what is live rather than what an earlier phase left behind.
  static func releaseFreeMemory() {
    #if canImport(CLinuxSystem)
      _ = malloc_trim(0)
    #endif
  }
}
