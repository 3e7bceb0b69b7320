import Foundation

/// The writer's side of attached keys (Docs/FORMAT.md, "Version 5: attached keys"): what a
/// commit's puts and deletes do to the keys the records they replace carry.
extension CaskStore {
  /// The attachment sections of the records that the batch's keys replace or delete and that
  /// carry attached keys, read from disk under the writer lock and outside the index's lock.
  func replacedSections(of operations: [Prepared]) -> [RecordLocation: [UInt8]] {
    let owners = state.withLock { state -> [(IndexKey, RecordLocation, Segment?)] in
      var owners: [(IndexKey, RecordLocation, Segment?)] = []
      // Prevents: a lookup per write in a store where no record carries attached keys.
      guard !state.directory.attachedOwners.isEmpty || !state.directory.attachedOwnersKnown else { return owners }
      for operation in operations {
        let location = IndexKey.withUTF8(of: operation.key.string) {
          state.directory.attachingLocation(forBytes: $0)
        }
        if let location { owners.append((operation.key, location, state.segments[location.segment])) }
      }
      return owners
    }
    var sections: [RecordLocation: [UInt8]] = [:]
    for (key, location, segment) in owners {
      let section = IndexKey.withUTF8(of: key.string) { segment?.attachedSection(at: location, owner: $0) }
      if let section { sections[location] = section }
    }
    return sections
  }

  /// Reads a replaced record's section from `known`, else from its segment (a record that
  /// compaction moved after `replacedSections` read it).
  static func sectionReader(known: [RecordLocation: [UInt8]], segments: [UInt32: Segment])
    -> KeyDirectory.SectionReader
  {
    { location, owner in
      known[location] ?? segments[location.segment]?.attachedSection(at: location, owner: owner)
    }
  }

  /// Leaves out the deletes of keys attached to a record that a put or delete of its owner in
  /// the same batch replaces, unless the owner's new record attaches them again: replacing the
  /// owner drops them (no tombstone is needed; replaying the log drops them the same way).
  func dropDeletesOfDetachedKeys(_ operations: inout [Prepared]) {
    guard operations.count > 1, operations.contains(where: \.isDelete) else { return }
    var kept: Set<[UInt8]> = []
    var replaced: Set<RecordLocation> = []
    state.withLock { state in
      guard !state.directory.attachedOwners.isEmpty || !state.directory.attachedOwnersKnown else { return }
      for operation in operations {
        IndexKey.withUTF8(of: operation.key.string) { key in
          if let location = state.directory.attachingLocation(forBytes: key) {
            replaced.insert(KeyDirectory.attachedLocation(of: location))
          }
          operation.attached.withUnsafeBytes { section in
            _ = AttachedKeys.forEachKey(in: section, owner: key) { kept.insert(Array($0)) }
          }
        }
      }
    }
    guard !replaced.isEmpty else { return }
    var dropped: [Int] = []
    state.withLock { state in
      for index in operations.indices where operations[index].isDelete {
        let detached = IndexKey.withUTF8(of: operations[index].key.string) { key -> Bool in
          guard let location = state.directory.location(forBytes: key), replaced.contains(location) else {
            return false
          }
          return !kept.contains(Array(key))
        }
        if detached { dropped.append(index) }
      }
    }
    for index in dropped.reversed() { operations.remove(at: index) }
  }
}

/// The keys one write took off the record it replaced and did not attach again: the hint of the
/// segment lists each as a delete of length 0 at the write's record (Docs/FORMAT.md, section 6).
/// Prevents: a hint made from the index, which lists only the last record of each key, losing
/// the removal of a key that a record left out of it had attached (a key written on its own,
/// then attached by an intermediate record of its owner, then dropped by the last one, came
/// back at the next open from hints).
struct DetachedKeys {
  private var dropped: [[UInt8]] = []
  private var added: Set<[UInt8]> = []

  /// Notes a key dropped or added. An added key is kept only while some key was dropped: a
  /// write drops the old record's keys before it adds its own, and an added key points at the
  /// new record, which nothing later in the same write drops, so an add with nothing dropped
  /// yet cancels nothing. Prevents: a byte array and a set insertion for every key of every
  /// save of a new object.
  mutating func note(_ key: UnsafeRawBufferPointer, added isAdded: Bool) {
    if !isAdded {
      dropped.append(Array(key))
    } else if !dropped.isEmpty {
      added.insert(Array(key))
    }
  }

  /// Appends the dropped keys not added again to `tombstones`, at `offset`, and starts over.
  mutating func record(into tombstones: inout HintEntries, offset: UInt32) {
    for key in take() {
      key.withUnsafeBytes { tombstones.append(isDelete: true, offset: offset, length: 0, key: $0) }
    }
  }

  /// The dropped keys not added again, in the order they were dropped; starts over.
  mutating func take() -> [[UInt8]] {
    defer {
      dropped.removeAll()
      added.removeAll()
    }
    return dropped.filter { !added.contains($0) }
  }
}
