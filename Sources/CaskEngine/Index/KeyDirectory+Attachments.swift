/// Attached keys in the directory (Docs/FORMAT.md, "Version 5: attached keys"): a key a put's
/// record carries besides its own points at that record with length 0, so that it has no bytes
/// of its own in the usage figures and a get of it reads nothing. Whatever replaces or removes
/// the owner at that record (a put, a delete, compaction) replaces the whole set it carried:
/// the keys the old record lists that still point at it are dropped, then the new record's
/// keys are added. Computed from the record being replaced, never from a difference, so the
/// rule gives the same directory whichever of the owner's records compaction left.
extension KeyDirectory {
  /// Reads the attachment section of the record at a location whose key is the given bytes
  /// (`Segment.attachedSection`); `nil` when it cannot.
  typealias SectionReader = (RecordLocation, UnsafeRawBufferPointer) -> [UInt8]?
  /// Told of each attached key added (`true`, with whether it existed before) or dropped
  /// (`false`), for the change observers.
  typealias AttachedChange = (_ key: UnsafeRawBufferPointer, _ added: Bool, _ existed: Bool) -> Void

  /// The location an attached key of the record at `owner` has.
  static func attachedLocation(of owner: RecordLocation) -> RecordLocation {
    RecordLocation(segment: owner.segment, offset: owner.offset, length: 0)
  }

  private static func word(_ location: RecordLocation) -> UInt64 {
    UInt64(location.segment) << 32 | UInt64(location.offset)
  }

  /// Builds `attachedOwners` from the attached keys, if a checkpoint's tables left it unknown.
  ///
  /// - Complexity: O(capacity of every table), once.
  mutating func learnAttachedOwners() {
    guard !attachedOwnersKnown else { return }
    var owners: Set<UInt64> = []
    let collect = { (location: RecordLocation) in
      if location.length == 0 { owners.insert(Self.word(location)) }
    }
    ungrouped.forEachLocation(collect)
    for table in groups.tables { table.forEachLocation(collect) }
    attachedOwners = owners
    attachedOwnersKnown = true
  }

  /// Whether the record at `location` carries attached keys that still point at it.
  mutating func carriesAttachments(_ location: RecordLocation) -> Bool {
    guard location.length > 0 else { return false }
    learnAttachedOwners()
    return attachedOwners.contains(Self.word(location))
  }

  /// Whether the record at `location` may carry attached keys that still point at it: exactly
  /// `carriesAttachments` once `attachedOwners` is known; before (tables from a checkpoint),
  /// any record may, and the caller reads its section instead.
  /// Prevents: the first write after opening from a checkpoint walking every table (and so
  /// loading every page of it) to learn `attachedOwners`.
  func mayCarryAttachments(_ location: RecordLocation) -> Bool {
    guard location.length > 0 else { return false }
    return !attachedOwnersKnown || attachedOwners.contains(Self.word(location))
  }

  /// The location of the key with UTF-8 `key` when its record may carry attached keys
  /// (`mayCarryAttachments`).
  mutating func attachingLocation(forBytes key: UnsafeRawBufferPointer) -> RecordLocation? {
    guard let location = location(forBytes: key), mayCarryAttachments(location) else { return nil }
    return location
  }

  /// Drops the attached keys of the owner `key`'s current record, before the owner is put
  /// again or deleted. `section` is that record's attachment section (`oldSection`, read
  /// from disk only when the record may carry any, and empty when it carries none); when it
  /// cannot be read, every key pointing at the record is found by a walk of the tables instead.
  ///
  /// - Complexity: O(1) when the record carries none; else O(attached keys), or O(capacity)
  ///   without the section.
  mutating func dropAttachments(
    ofOwner key: UnsafeRawBufferPointer, oldSection: SectionReader, onChange: AttachedChange? = nil
  ) {
    guard let owner = attachingLocation(forBytes: key) else { return }
    dropAttachments(at: owner, owner: key, section: oldSection(owner, key), onChange: onChange)
  }

  /// Drops the keys `section` attaches to `owner` (the key's bytes) at `location` that still
  /// point there; every key pointing there when `section` is `nil`.
  mutating func dropAttachments(
    at location: RecordLocation, owner: UnsafeRawBufferPointer, section: [UInt8]?, onChange: AttachedChange? = nil
  ) {
    let attached = Self.attachedLocation(of: location)
    attachedOwners.remove(Self.word(location))
    if let section {
      _ = section.withUnsafeBytes { section in
        AttachedKeys.forEachKey(in: section, owner: owner) { key in
          if self.location(forBytes: key) == attached {
            setLocation(nil, forBytes: key)
            onChange?(key, false, true)
          }
        }
      }
      return
    }
    var stale: [[UInt8]] = []
    let collect = { (key: UnsafeRawBufferPointer, _: RecordLocation) in stale.append(Array(key)) }
    ungrouped.forEachEntryBytes(where: { $0 == attached }, collect)
    for table in groups.tables { table.forEachEntryBytes(where: { $0 == attached }, collect) }
    for key in stale {
      key.withUnsafeBytes {
        setLocation(nil, forBytes: $0)
        onChange?($0, false, true)
      }
    }
  }

  /// Adds the keys `section` attaches to `owner` (the key's bytes), whose record is at
  /// `location`: each points at it with length 0. A key that itself owned a record with
  /// attached keys loses them first, as a put of it would.
  mutating func attach(
    _ section: UnsafeRawBufferPointer, owner: UnsafeRawBufferPointer, at location: RecordLocation,
    oldSection: SectionReader, onChange: AttachedChange? = nil
  ) {
    guard section.count > 0 else { return }
    let attached = Self.attachedLocation(of: location)
    // Checked where it came in (the writer's encode, an opened record, a decoded hint).
    AttachedKeys.forEachKey(inChecked: section, owner: owner) { key in
      // One lookup per key: the key is pointed at the record first, then the record it owned
      // before, if any, loses its attached keys. None of those is the key itself (an attached
      // key ends in its owner's id after two separators, so it never spells its owner's key),
      // so the order changes nothing. A key of length 0 adds no bytes to the usage figures.
      // Prevents: a lookup of the key to drop what it owned, another to point it here, and two
      // lookups of the usage table, for every key of every save into an indexed collection.
      let old = applyAttachedPut(keyBytes: key, at: attached)
      if let old, mayCarryAttachments(old) {
        dropAttachments(at: old, owner: key, section: oldSection(old, key), onChange: onChange)
      }
      onChange?(key, true, old != nil)
    }
    attachedOwners.insert(Self.word(location))
  }

  /// Points the keys `section` attaches to `owner` from its record at `from` to its copy at
  /// `to`, those that still point at `from` (compaction).
  mutating func relocateAttachments(
    _ section: UnsafeRawBufferPointer, owner: UnsafeRawBufferPointer, from: RecordLocation, to: RecordLocation
  ) {
    let old = Self.attachedLocation(of: from)
    let new = Self.attachedLocation(of: to)
    attachedOwners.remove(Self.word(from))
    var moved = false
    AttachedKeys.forEachKey(in: section, owner: owner) { key in
      if location(forBytes: key) == old {
        setLocation(new, forBytes: key)
        moved = true
      }
    }
    if moved { attachedOwners.insert(Self.word(to)) }
  }

  /// The keys attached to the record at `location` that still point at it, as a section for
  /// `owner`'s record (a hint's entry, a compaction's copy); `nil` for none.
  ///
  /// - Parameter section: the record's own section, which lists every candidate.
  func currentAttachments(_ section: UnsafeRawBufferPointer, owner: String, at location: RecordLocation) -> [UInt8]? {
    let attached = Self.attachedLocation(of: location)
    var keys: [String] = []
    _ = IndexKey.withUTF8(of: owner) { ownerBytes in
      AttachedKeys.forEachKey(in: section, owner: ownerBytes) { key in
        if self.location(forBytes: key) == attached { keys.append(String(decoding: key, as: UTF8.self)) }
      }
    }
    return try? AttachedKeys.encode(keys, owner: owner)
  }

  /// The number of attached keys whose location is not the current record of a key that
  /// carries attached keys (0 in a consistent directory).
  ///
  /// - Complexity: O(n) time and memory in the number of keys.
  func strayAttachedKeys() -> Int {
    var owners: Set<UInt64> = []
    var attached: [UInt64] = []
    let collect = { (location: RecordLocation) in
      if location.length == 0 { attached.append(Self.word(location)) } else { owners.insert(Self.word(location)) }
    }
    ungrouped.forEachLocation(collect)
    for table in groups.tables { table.forEachLocation(collect) }
    return attached.filter { !owners.contains($0) }.count
  }

  /// Every attached key, and each owner's attached keys.
  ///
  /// - Complexity: O(n) in the number of keys.
  func attachedKeysByOwner() -> (keys: Set<String>, byOwner: [String: [String]]) {
    var owners: [UInt64: String] = [:]
    var attached: [(String, UInt64)] = []
    let collect = { (key: UnsafeRawBufferPointer, location: RecordLocation) in
      let string = String(decoding: key, as: UTF8.self)
      if location.length == 0 {
        attached.append((string, Self.word(location)))
      } else if attachedOwners.contains(Self.word(location)) || !attachedOwnersKnown {
        owners[Self.word(location)] = string
      }
    }
    ungrouped.forEachEntryBytes(collect)
    for table in groups.tables { table.forEachEntryBytes(collect) }
    var byOwner: [String: [String]] = [:]
    var keys: Set<String> = []
    for (key, word) in attached {
      guard let owner = owners[word] else { continue }
      byOwner[owner, default: []].append(key)
      keys.insert(key)
    }
    return (keys, byOwner)
  }
}
