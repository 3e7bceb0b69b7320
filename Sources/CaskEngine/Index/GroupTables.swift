#if canImport(Glibc)
  import Glibc
#endif

/// The tables of a `KeyDirectory`'s groups, by group name. The last few groups used are also
/// found by comparing the name's bytes, making no `String` and hashing nothing: open applies
/// millions of keys that alternate between a handful of groups (a collection and its index
/// groups), and a `String` and a hash per key for its group cost more than the key's own slot.
struct GroupTables: Sendable {
  /// How many groups used lately are found by their bytes.
  static let recentLimit = 8

  private var positions: [IndexKey: Int] = [:]
  /// The names of the groups, in the order of `tables`.
  private(set) var names: [IndexKey] = []
  private(set) var tables: [KeyTable] = []
  /// Positions in `tables` of the groups used lately, the latest last.
  private var recent: [Int] = []
  /// Keys expected in groups that have no table yet (open's sizing, from the hints): a table
  /// made for one of them is sized for them at once. A group that never gets a key never gets
  /// a table, whatever was planned for it.
  private var planned: [IndexKey: Int] = [:]
  /// What each table hashes its keys with.
  let hashKey: KeyHashKey

  init(hashKey: KeyHashKey) {
    self.hashKey = hashKey
  }

  /// The groups of a checkpoint, in its order.
  init(hashKey: KeyHashKey, tables named: [(name: IndexKey, table: KeyTable)]) {
    self.hashKey = hashKey
    for (position, group) in named.enumerated() {
      positions[group.name] = position
      names.append(group.name)
      tables.append(group.table)
    }
  }

  /// The table of group `name`.
  subscript(name: IndexKey) -> KeyTable? {
    positions[name].map { tables[$0] }
  }

  /// The position of the group named by `name`'s bytes if it is among those used lately.
  func recentPosition(_ name: UnsafeRawBufferPointer) -> Int? {
    for position in recent.reversed() {
      let matches = names[position].string.utf8.withContiguousStorageIfAvailable { stored in
        stored.count == name.count
          && (name.count == 0 || memcmp(stored.baseAddress!, name.baseAddress!, name.count) == 0)
      }
      if matches == true { return position }
    }
    return nil
  }

  /// The position of the group named by `name`'s bytes, or `nil` when there is none, without
  /// remembering it among the recent ones (for readers, which do not change the index).
  func existingPosition(ofBytes name: UnsafeRawBufferPointer) -> Int? {
    recentPosition(name) ?? positions[IndexKey(String(decoding: name, as: UTF8.self))]
  }

  /// The position of the group named by `name`'s bytes, or `nil` when there is none.
  mutating func position(ofBytes name: UnsafeRawBufferPointer) -> Int? {
    if let position = recentPosition(name) { return position }
    guard let found = positions[IndexKey(String(decoding: name, as: UTF8.self))] else { return nil }
    remember(found)
    return found
  }

  /// The position of the group named by `name`'s bytes, made (empty) if there is none.
  mutating func position(creatingGroup name: UnsafeRawBufferPointer) -> Int {
    if let position = recentPosition(name) { return position }
    let key = IndexKey(String(decoding: name, as: UTF8.self))
    let found: Int
    if let existing = positions[key] {
      found = existing
    } else {
      found = tables.count
      positions[key] = found
      names.append(key)
      var table = KeyTable(hashKey: hashKey)
      if let expected = planned.removeValue(forKey: key) { table.reserveCapacity(expected) }
      tables.append(table)
    }
    remember(found)
    return found
  }

  /// Makes room in group `name`'s table (made, empty, if there is none) for `additional` more
  /// keys.
  mutating func reserveCapacity(additional: Int, inGroup name: IndexKey) {
    var text = name.string
    let position = text.withUTF8 { utf8 -> Int in self.position(creatingGroup: UnsafeRawBufferPointer(utf8)) }
    tables[position].reserveCapacity(tables[position].count + additional)
  }

  /// Expects `additional` more keys in group `name` (its bytes): its table grows to hold them
  /// now, or is made for them when its first key comes. With `growing`, a table that must grow
  /// at least doubles (sizing hint by hint, several times over, stays linear).
  mutating func plan(additional: Int, inGroup name: UnsafeRawBufferPointer, growing: Bool) {
    guard additional > 0 else { return }
    let position = recentPosition(name) ?? positions[IndexKey(String(decoding: name, as: UTF8.self))]
    guard let position else {
      planned[IndexKey(String(decoding: name, as: UTF8.self)), default: 0] += additional
      return
    }
    let needed = tables[position].count + additional
    if growing {
      tables[position].reserveCapacity(growingTo: needed)
    } else {
      tables[position].reserveCapacity(needed)
    }
  }

  /// Forgets what was planned for groups that got no key (at the end of open).
  mutating func forgetPlans() {
    planned = [:]
  }

  private mutating func remember(_ position: Int) {
    if recent.count == Self.recentLimit { recent.removeFirst() }
    recent.append(position)
  }

  /// Sets `key`'s location in the table at `position`; returns the location it replaces.
  mutating func updateValue(_ location: RecordLocation, forKey key: UnsafeRawBufferPointer, at position: Int)
    -> RecordLocation?
  {
    tables[position].updateValue(location, forKey: key)
  }

  /// `updateValue(_:forKey:at:)` for a key whose meta word is known.
  mutating func updateValue(
    _ location: RecordLocation, forKey key: UnsafeRawBufferPointer, meta: UInt32, at position: Int
  ) -> RecordLocation? {
    tables[position].updateValue(location, forKey: key, meta: meta)
  }

  /// Removes `key` from the table at `position` (and the table, once empty); returns its
  /// location.
  mutating func removeValue(forKey key: UnsafeRawBufferPointer, at position: Int) -> RecordLocation? {
    let old = tables[position].removeValue(forKey: key)
    if tables[position].count == 0 { removeTable(at: position) }
    return old
  }

  /// Removes an empty table, moving the last one into its place.
  private mutating func removeTable(at position: Int) {
    let last = tables.count - 1
    if position != last {
      tables.swapAt(position, last)
      names.swapAt(position, last)
      positions[names[position]] = position
    }
    tables.removeLast()
    positions[names.removeLast()] = nil
    recent.removeAll()
  }
}
