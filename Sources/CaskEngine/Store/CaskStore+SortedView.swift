extension CaskStore {
  /// The keys of a sorted group (one whose name begins with `CaskFormat.reservedGroupByte`) in
  /// byte order as they are now, each the part after the group's name and U+0000, read from
  /// the checkpoint's sorted pages on demand and merged with what changed since. A value:
  /// later writes do not change it.
  ///
  /// - Returns: `nil` when the store has no sorted pages to read (it was not opened from a
  ///   checkpoint that holds them: a small store, a new one, or one whose checkpoint was
  ///   ignored); the caller then reads the group's keys as they come (`packedKeys(inGroup:)`).
  /// - Throws: `CaskError.closed`; the index's damage (`CaskError.corrupt`).
  /// - Complexity: O(1): the view shares the checkpoint's pages and the changes.
  package func sortedView(ofGroup group: String) throws -> SortedGroupView? {
    try state.withLock { state in
      try state.throwIfClosed()
      try state.throwIfDamaged()
      return state.directory.sortedView(ofGroup: IndexKey(group))
    }
  }
}
