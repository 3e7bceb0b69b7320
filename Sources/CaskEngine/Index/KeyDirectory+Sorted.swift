/// The sorted groups of a directory loaded from a checkpoint (Docs/FORMAT.md, section 18):
/// every group whose name begins with `CaskFormat.reservedGroupByte` has its keys, as the
/// checkpoint held them, in sorted pages, and the directory keeps what changed in it since,
/// so that `sortedView(ofGroup:)` gives its keys in order without sorting them.
///
/// What changed is kept where membership changes, in `setLocation` and the hint batch's puts:
/// every put, delete, attached key and replay of the log after the checkpoint passes there,
/// so the changes are exact whatever path a key came or went by. A group with no base (none
/// of its keys were in the checkpoint) is all changes.
struct SortedGroups: Sendable {
  /// Each sorted group of the checkpoint.
  var bases: [IndexKey: SortedGroupBase]
  /// What changed in each sorted group since.
  var changes: [IndexKey: SortedGroupChanges] = [:]
  /// Where the bases' pages are kept once read.
  let cache: SortedPageCache

  /// Bytes of the keys held in `changes`.
  var changeBytes: Int { changes.values.reduce(0) { $0 + $1.added.keyBytes + $1.removed.keyBytes } }
}

/// What changed in a sorted group since its checkpoint: keys present now that the checkpoint
/// did not hold, and keys it held that are gone.
struct SortedGroupChanges: Sendable, Equatable {
  var added = SortedKeySet()
  var removed = SortedKeySet()

  /// Notes that `key` (after the group's name and U+0000) became present or absent.
  mutating func note(_ key: UnsafeRawBufferPointer, present: Bool) {
    // A key present in the checkpoint and removed, then put again, is as the checkpoint held
    // it; a key added and removed again likewise.
    if present {
      if !removed.remove(key) { added.insert(key) }
    } else if !added.remove(key) {
      removed.insert(key)
    }
  }
}

extension KeyDirectory {
  /// Notes that the key with UTF-8 `key` became present or absent, if it is in a sorted group.
  mutating func noteSortedChange(_ key: UnsafeRawBufferPointer, present: Bool) {
    guard let group = Self.groupBytes(of: key), group.first == CaskFormat.reservedGroupByte else { return }
    let name = IndexKey(String(decoding: group, as: UTF8.self))
    let entry = UnsafeRawBufferPointer(rebasing: key[(group.count + 1)...])
    sorted?.changes[name, default: SortedGroupChanges()].note(entry, present: present)
  }

  /// Gives the directory the sorted groups of the checkpoint it was loaded from.
  mutating func setSortedGroups(_ bases: [IndexKey: SortedGroupBase], cache: SortedPageCache) {
    sorted = SortedGroups(bases: bases, cache: cache)
  }

  /// The keys of `group` in order, now; `nil` when the directory has no sorted groups (it
  /// was not loaded from a checkpoint that holds them) or `group` is not a sorted one.
  func sortedView(ofGroup group: IndexKey) -> SortedGroupView? {
    guard let sorted, group.string.utf8.first == CaskFormat.reservedGroupByte else { return nil }
    let changes = sorted.changes[group]
    return SortedGroupView(
      base: sorted.bases[group], added: changes?.added ?? SortedKeySet(), removed: changes?.removed ?? SortedKeySet())
  }
}
