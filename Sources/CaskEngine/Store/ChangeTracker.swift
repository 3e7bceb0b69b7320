import Foundation

/// Records, in the same atomic batch as each commit, which keys of a tracked group it changed:
/// a layer that sends changes elsewhere (sync) then learns of every write whatever API made
/// it, in this process or a later one, and a crash loses neither a change nor its mark.
///
/// A group is tracked while the key `__tracked\0<group>` exists (`CaskFormat.trackedGroupsGroup`).
/// A commit that puts or deletes `<group>\0<rest>` gets the write
/// `__changes:<group>\0<rest>` = a fresh token (`CaskFormat.changeMarkPrefix`), unless the same
/// commit writes that group's `__tracked` key or any of its change marks: such a commit is the
/// tracking layer's own (it applies what the server sent, or clears marks it has sent) and
/// keeps its marks as it wrote them.
///
/// Runs under the writer lock, so the set of tracked groups it reads is the store's before the
/// commit. The set is read from the store on first use and read again after any commit that
/// writes a `__tracked` key, so a commit that fails after the hook leaves no stale copy.
final class ChangeTracker: Sendable {
  /// The tracked groups, or `nil` when they must be read from the store again.
  private let tracked = Locked<Set<String>?>(nil)

  private static let markerPrefix = CaskFormat.trackedGroupsGroup + CaskFormat.keyGroupSeparatorText
  /// Tracking keys start with `_`: a write whose key does not costs one byte comparison.
  private static let underscore = UInt8(ascii: "_")

  /// The change marks that `writes` (one commit's) add.
  ///
  /// - Complexity: O(n) for the commit's n writes; O(t) more for the t tracked groups when the
  ///   set must be read again.
  func marks(for writes: [CommitWrite], in store: CaskStore) throws -> [CommitWrite] {
    var groups = try trackedGroups(in: store)
    var exempt: Set<String> = []
    var markersWritten = false
    for write in writes where write.key.utf8.first == Self.underscore {
      if write.key.hasPrefix(Self.markerPrefix) {
        let group = String(write.key.dropFirst(Self.markerPrefix.count))
        if write.value == nil { groups.remove(group) } else { groups.insert(group) }
        exempt.insert(group)
        markersWritten = true
      } else if write.key.hasPrefix(CaskFormat.changeMarkPrefix), let (group, _) = Self.split(write.key) {
        exempt.insert(String(group.dropFirst(CaskFormat.changeMarkPrefix.count)))
      }
    }
    if markersWritten { tracked.withLock { $0 = nil } }
    guard !groups.isEmpty else { return [] }
    var marks: [String: CommitWrite] = [:]
    for write in writes {
      guard let (group, rest) = Self.split(write.key), groups.contains(String(group)),
        !exempt.contains(String(group))
      else { continue }
      let key = Self.markKey(group: group, rest: rest)
      marks[key] = CommitWrite(key: key, value: Self.token())
    }
    return Array(marks.values)
  }

  /// Whether `batch` may need marks: some group is tracked, or the batch writes a
  /// `__tracked` key (it may start tracking one).
  ///
  /// - Complexity: O(1) when a group is tracked; else one byte comparison per write.
  func mayMark(_ batch: CaskBatch, in store: CaskStore) throws -> Bool {
    if try !trackedGroups(in: store).isEmpty { return true }
    return batch.operations.contains { operation in
      let key: String
      switch operation {
      case .put(let written, _): key = written
      case .delete(let written): key = written
      }
      return key.utf8.first == Self.underscore && key.hasPrefix(Self.markerPrefix)
    }
  }

  /// A hook that marks the writes of one streamed batch, or `nil` when no group is tracked.
  func streamedHook(in store: CaskStore) throws -> (any StreamedCommitHook)? {
    let groups = try trackedGroups(in: store)
    return groups.isEmpty ? nil : StreamedMarks(groups: groups)
  }

  private func trackedGroups(in store: CaskStore) throws -> Set<String> {
    if let groups = tracked.withLock({ $0 }) { return groups }
    let keys = try store.unsortedKeys(inGroup: CaskFormat.trackedGroupsGroup)
    let groups = Set(keys.map { String($0.dropFirst(Self.markerPrefix.count)) })
    tracked.withLock { $0 = groups }
    return groups
  }

  /// A key's group and the part after its separator, or `nil` for a key in no group.
  static func split(_ key: String) -> (group: Substring, rest: Substring)? {
    guard let separator = key.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return nil }
    return (key[..<separator], key[key.utf8.index(after: separator)...])
  }

  static func markKey(group: Substring, rest: Substring) -> String {
    CaskFormat.changeMarkPrefix + group + CaskFormat.keyGroupSeparatorText + rest
  }

  /// 16 hex digits, new for every mark: the tracking layer clears a mark only while it still
  /// holds the token it read before sending, so a change made meanwhile keeps its mark.
  static func token() -> Data {
    let number = UInt64.random(in: 0...UInt64.max)
    let digits = String(number, radix: 16)
    return Data((String(repeating: "0", count: 16 - digits.count) + digits).utf8)
  }
}

/// The change marks of one streamed batch, gathered write by write.
private final class StreamedMarks: StreamedCommitHook {
  private let groups: Set<String>
  private var marks: Set<String> = []

  init(groups: Set<String>) { self.groups = groups }

  func add(_ write: CommitWrite) throws {
    guard let (group, rest) = ChangeTracker.split(write.key), groups.contains(String(group)) else { return }
    marks.insert(ChangeTracker.markKey(group: group, rest: rest))
  }

  func finish() throws -> [CommitWrite] {
    marks.map { CommitWrite(key: $0, value: ChangeTracker.token()) }
  }
}

/// Two streamed hooks in turn: the layer's (indexes) first, then the change marks.
final class ChainedStreamedHook: StreamedCommitHook {
  private let first: any StreamedCommitHook
  private let second: any StreamedCommitHook

  init(_ first: any StreamedCommitHook, _ second: any StreamedCommitHook) {
    self.first = first
    self.second = second
  }

  func add(_ write: CommitWrite) throws {
    try first.add(write)
    try second.add(write)
  }

  func finish() throws -> [CommitWrite] {
    try first.finish() + second.finish()
  }
}
