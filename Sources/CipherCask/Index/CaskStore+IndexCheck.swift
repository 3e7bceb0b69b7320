import Foundation

/// What `CaskStore.checkIndexEntries()` found for one stored index.
public struct IndexEntryCheck: Sendable, Equatable, Encodable {
  public var collection: String
  public var index: String
  /// The index's entries.
  public var entries: Int
  /// Entries whose object does not exist.
  public var danglingEntries: Int
  /// Objects with no entry in an index that gives every object one (plain and unique).
  public var objectsWithoutEntry: Int

  public var isClean: Bool { danglingEntries == 0 && objectsWithoutEntry == 0 }
}

extension CaskStore {
  /// Checks every complete index of every collection against the store's objects, without
  /// knowing their types (for tools such as `cask verify`): each entry must name an existing
  /// object, and every object must have an entry in each plain or unique index. A
  /// collection's `verifyIndexes()` checks more: that each entry holds the object's value.
  ///
  /// - Complexity: O(e) lookups for the e entries, O(n) for the n objects; no value is read
  ///   except the catalogues.
  public func checkIndexEntries() throws -> [IndexEntryCheck] {
    var checks: [IndexEntryCheck] = []
    for catalogKey in try keys(inGroup: IndexStoreKeys.catalogGroup) {
      guard let (_, collection) = IndexStoreKeys.splitKey(catalogKey),
        let catalog = try get(catalogKey).flatMap(IndexCatalog.decoded)
      else { continue }
      let name = String(collection)
      for index in catalog.indexes where index.state == .ready {
        let group = IndexStoreKeys.group(collection: name, index: index.name, hash: index.hash)
        var ids = Set<ByteString>()
        var check = IndexEntryCheck(
          collection: name, index: index.name, entries: 0, danglingEntries: 0, objectsWithoutEntry: 0)
        for key in try keys(inGroup: group) {
          check.entries += 1
          guard let (_, rest) = IndexStoreKeys.splitKey(key), let (_, id) = IndexStoreKeys.split(entry: String(rest))
          else {
            check.danglingEntries += 1
            continue
          }
          ids.insert(ByteString(id))
          if try !contains(name + "\u{0}" + id) { check.danglingEntries += 1 }
        }
        if index.kind != CaskIndexKind.each.rawValue {
          for key in try keys(inGroup: name) {
            guard let (_, id) = IndexStoreKeys.splitKey(key), ids.contains(ByteString(id)) else {
              check.objectsWithoutEntry += 1
              continue
            }
          }
        }
        checks.append(check)
      }
    }
    return checks
  }
}

extension CaskStore {
  /// Whether `collection` has indexes that its writes must keep (complete or being built): a
  /// writer that does not know the collection's model, such as `cask import`, cannot make
  /// their entries and must not write its objects.
  ///
  /// - Complexity: one read, of the collection's catalogue.
  package func hasKeptIndexes(collection: String) throws -> Bool {
    guard let catalog = try get(IndexStoreKeys.catalogKey(collection: collection)).flatMap(IndexCatalog.decoded) else {
      return false
    }
    return catalog.indexes.contains { $0.state != .stale }
  }
}

/// An index recorded in the store that is not complete (`CaskStore.incompleteIndexes()`).
public struct IncompleteIndex: Sendable, Equatable, Encodable {
  public var collection: String
  public var index: String
}

extension CaskStore {
  /// The indexes whose build has not finished: cut short by a crash, or failed (an object
  /// that does not decode as the declared type, a unique violation among stored objects).
  /// Queries scan instead of using them, and the app's next `buildIndexes()` finishes them or
  /// throws why; tools such as `cask verify` report them.
  ///
  /// - Complexity: one read per collection with indexes (its catalogue).
  public func incompleteIndexes() throws -> [IncompleteIndex] {
    var incomplete: [IncompleteIndex] = []
    for catalogKey in try keys(inGroup: IndexStoreKeys.catalogGroup) {
      guard let (_, collection) = IndexStoreKeys.splitKey(catalogKey),
        let catalog = try get(catalogKey).flatMap(IndexCatalog.decoded)
      else { continue }
      for index in catalog.indexes where index.state == .building {
        incomplete.append(IncompleteIndex(collection: String(collection), index: index.name))
      }
    }
    return incomplete
  }
}
