import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A named collection of model objects in a store, addressed by their `id`.
///
/// Objects are encoded with the collection's `CaskCoder` and stored under the key
/// `name + "\u{0}" + id.description`; the engine keeps each collection in its own index table,
/// so every operation on one collection costs the same whatever else the store holds. Names,
/// ids and objects are all encrypted on disk.
///
/// A collection is a cheap value: make as many as you like, from any thread. All operations
/// are thread-safe, and each has an `async` form.
///
/// Ids are `LosslessStringConvertible` (String, Int, ...) or `UUID`: the store's `collection`
/// methods accept no other kind. Keys hold an id's `description`.
public struct CaskCollection<T: Codable & Identifiable & Sendable>: Sendable
where T.ID: CustomStringConvertible & Sendable {
  /// The collection's name; collections of different names never see each other's objects.
  public let name: String
  /// The store it lives in.
  public let store: CaskStore
  /// How objects are encoded.
  public let coder: any CaskCoder

  /// Why the name may not be used (it is not a valid group name, or it is a default name
  /// another type already took), checked once when the collection is made. Prevents: every
  /// save and get scanning the name again (a tenth of a save's own work).
  private let nameProblem: String?
  /// `name` and the separator: the start of every key of this collection.
  private let keyPrefix: String

  init(store: CaskStore, name: String, coder: any CaskCoder) {
    self.store = store
    self.name = name
    self.coder = coder
    self.nameProblem = Self.problem(withName: name)
    self.keyPrefix = name + Self.separator
  }

  /// The collection named after `T`, unless another type of the same name (in another module,
  /// or nested in another type: `Feed.Item` and `Cart.Item` are both "Item") already took that
  /// name for this store in this process: then every throwing call fails, instead of the two
  /// types sharing, decoding and deleting each other's objects.
  init(store: CaskStore, namedAfterTypeWith coder: any CaskCoder) {
    let name = String(describing: T.self)
    self.store = store
    self.name = name
    self.coder = coder
    self.nameProblem = Self.problem(withName: name) ?? DefaultNames.claim(name, for: T.self, in: store)
    self.keyPrefix = name + Self.separator
  }

  // MARK: Keys

  static var separator: String { CaskFormat.keyGroupSeparatorText }

  func checkName() throws {
    if let nameProblem { throw CaskError.invalidKey(reason: nameProblem) }
  }

  /// Why `name` cannot name a collection, or `nil` when it can.
  private static func problem(withName name: String) -> String? {
    guard !name.isEmpty, !name.utf8.contains(CaskFormat.keyGroupSeparator) else {
      return "collection names must be non-empty and must not contain U+0000"
    }
    // Prevents: a collection's objects landing among index entries and catalogues
    // (Index/IndexStoreKeys.swift), whose groups begin with U+0001.
    guard name.utf8.first != IndexStoreKeys.reservedPrefix else {
      return "collection names must not begin with U+0001 (reserved for indexes)"
    }
    return nil
  }

  func key(for id: T.ID) throws -> String {
    try storageKey(for: id)
  }

  /// The store key of the object with `id`: `name + "\u{0}" + id.description`. For layers
  /// that write a collection's objects inside their own store transactions (sync, tools).
  ///
  /// - Throws: `CaskError.invalidKey` for an invalid collection name.
  public func storageKey(for id: T.ID) throws -> String {
    try checkName()
    return keyPrefix + id.description
  }

  /// Whether two ids make the same store key: compared by their UTF-8 bytes, as the store tells
  /// keys apart. (Swift's `==` takes two canonically equivalent strings, "é" as one code point
  /// and as e + accent, for one; the store keeps two keys.)
  package static func sameKey(_ id: T.ID, _ other: some CustomStringConvertible) -> Bool {
    id.description.utf8.elementsEqual(other.description.utf8)
  }

  /// The id part of a key of this collection (after the separator).
  static func idString(fromKey key: String) -> String {
    guard let separator = key.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return key }
    return String(key[key.index(after: separator)...])
  }

  /// The id in a key of this collection, or `nil` if it does not parse as `T.ID`.
  func id(fromKey key: String) -> T.ID? {
    Self.parseID(Self.idString(fromKey: key))
  }

  /// Reads an id back from its `description`: `init?(_:)` for a `LosslessStringConvertible`
  /// id, `init?(uuidString:)` for a `UUID`.
  static func parseID(_ text: String) -> T.ID? {
    // `Character.init(_:)` traps unless the text is one character: the id "" or "ab" of
    // another type sharing the collection's name would otherwise end the process.
    if T.ID.self == Character.self, text.count != 1 { return nil }
    if let lossless = T.ID.self as? any LosslessStringConvertible.Type {
      return lossless.init(text) as? T.ID
    }
    return UUID(uuidString: text) as? T.ID
  }

  func encode(_ object: T) throws -> Data {
    try coder.encode(object)
  }

  /// `data` decoded as a `T`; a failure is `CollectionError.decoding`, naming the object.
  ///
  /// - Parameter id: the object's id, for the error only: an autoclosure, so that a scan does
  ///   not make a string of every key's id (a sixth of a small object's decode).
  func decode(_ data: Data, id: @autoclosure () -> String) throws -> T {
    do {
      return try coder.decode(T.self, from: data)
    } catch {
      throw CollectionError.decoding(collection: name, id: id(), underlying: error)
    }
  }

  // MARK: Single objects

  /// Inserts `object`, or replaces the object with the same id.
  ///
  /// - Throws: `EncodingError`, and `CaskError` from the store.
  /// - Complexity: one encode, one encryption, one append.
  public func save(_ object: T) throws {
    try store.put(encode(object), forKey: key(for: object.id))
  }

  /// Saves all `objects` in one atomic batch: after a crash, all are saved or none.
  ///
  /// - Complexity: O(n) encodes, one append.
  public func save<S: Sequence<T>>(contentsOf objects: S) throws {
    try checkName()
    try store.batch { batch in
      for object in objects { try batch.put(encode(object), forKey: key(for: object.id)) }
    }
  }

  /// The object with `id`, or `nil`.
  ///
  /// - Throws: `CollectionError.decoding` if the stored object no longer decodes as `T`.
  /// - Complexity: O(1): one lookup, one read, one decryption, one decode.
  public func get(id: T.ID) throws -> T? {
    guard let data = try store.get(key(for: id)) else { return nil }
    return try decode(data, id: id.description)
  }

  /// Removes the object with `id`.
  ///
  /// - Returns: whether it existed.
  @discardableResult
  public func delete(id: T.ID) throws -> Bool {
    try store.delete(key(for: id))
  }

  /// Whether an object with `id` exists.
  ///
  /// - Complexity: O(1), no disk access.
  public func contains(id: T.ID) throws -> Bool {
    try store.contains(key(for: id))
  }

  /// The number of objects.
  ///
  /// - Complexity: O(1).
  public var count: Int {
    (try? checkName()) == nil ? 0 : store.count(inGroup: name)
  }

  /// The ids of all objects, in ascending order: by `T.ID`'s own `<` when `T.ID` is
  /// `Comparable` (so `Int` ids come as 1, 2, 10, and `String` ids in Swift's string order),
  /// otherwise by their text compared byte by byte.
  ///
  /// - Complexity: O(n log n) for the n objects of this collection; no disk access.
  public func ids() throws -> [T.ID] {
    try checkName()
    let ids = try store.keys(inGroup: name).compactMap(id(fromKey:))  // in text order already
    return Self.idsHaveOwnOrder ? Self.sortedByID(ids) : ids
  }

  // MARK: Whole collection

  /// What to do with a stored object that no longer decodes.
  public enum DecodingFailurePolicy: Sendable {
    /// Throw `CollectionError.decoding` (the default).
    case fail
    /// Leave it out and report it in `DecodedObjects.failures`.
    case skip
  }

  /// The objects of a read that skipped what did not decode.
  public struct DecodedObjects: Sendable {
    public var objects: [T]
    /// One `CollectionError.decoding` per object left out.
    public var failures: [CollectionError]
  }

  /// Every object, in no particular order.
  ///
  /// - Throws: `CollectionError.decoding` for the first object that no longer decodes.
  /// - Complexity: O(n) reads and decodes for the n objects of this collection.
  public func all() throws -> [T] {
    try all(onDecodingFailure: .fail).objects
  }

  /// Every object, skipping (and reporting) those that no longer decode when asked to.
  public func all(onDecodingFailure policy: DecodingFailurePolicy) throws -> DecodedObjects {
    var result = DecodedObjects(objects: [], failures: [])
    try forEachObject(onDecodingFailure: policy, failures: &result.failures) { result.objects.append($0) }
    return result
  }

  /// Decodes every object, in file order, and hands each to `body` before the next is read:
  /// a scan that `body` stops (by throwing) reads no further, and what `body` does not keep
  /// is not held. The objects are those of the moment of the call.
  func forEachObject(
    onDecodingFailure policy: DecodingFailurePolicy, failures: inout [CollectionError], _ body: (T) throws -> Void
  ) throws {
    try checkName()
    try store.forEachEntry(inGroup: name) { key, value in
      let object: T
      do {
        object = try decode(value, id: Self.idString(fromKey: key))
      } catch let error as CollectionError {
        guard policy == .skip else { throw error }
        failures.append(error)
        return
      }
      try body(object)
    }
  }

  /// Removes every object of this collection in one atomic batch.
  ///
  /// - Returns: how many were removed.
  @discardableResult
  public func removeAll() throws -> Int {
    try checkName()
    return try store.transaction { transaction in
      let keys = try transaction.keys(inGroup: name)
      for key in keys { try transaction.delete(key) }
      return keys.count
    }
  }
}

extension CaskCollection.DecodingFailurePolicy: Equatable {}

extension CaskStore {
  /// The collection of `type` named after the type.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, coder: any CaskCoder = BinaryCaskCoder()
  ) -> CaskCollection<T> where T.ID: LosslessStringConvertible & Sendable {
    CaskCollection(store: self, namedAfterTypeWith: coder)
  }

  /// The collection of `type` named `name`.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, named name: String, coder: any CaskCoder = BinaryCaskCoder()
  ) -> CaskCollection<T> where T.ID: LosslessStringConvertible & Sendable {
    CaskCollection(store: self, name: name, coder: coder)
  }

  /// The collection of `type`, whose ids are `UUID`s, named after the type.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, coder: any CaskCoder = BinaryCaskCoder()
  ) -> CaskCollection<T> where T.ID == UUID {
    CaskCollection(store: self, namedAfterTypeWith: coder)
  }

  /// The collection of `type`, whose ids are `UUID`s, named `name`.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, named name: String, coder: any CaskCoder = BinaryCaskCoder()
  ) -> CaskCollection<T> where T.ID == UUID {
    CaskCollection(store: self, name: name, coder: coder)
  }
}

/// The default collection names taken in each open store: which type has each.
///
/// Claims belong to one `CaskStore` instance and end with it. Prevents: a store recreated at
/// the same path (or opened again after a close) inheriting the claims of the one before it,
/// and a `realpath` on every `collection(_:)` call.
enum DefaultNames {
  /// One store's claims: name -> the type that has it.
  private final class Claims: Sendable {
    let names = Locked<[String: ObjectIdentifier]>([:])
  }

  /// Takes `name` for `type` in `store`; returns why it cannot when another type has it.
  static func claim(_ name: String, for type: Any.Type, in store: CaskStore) -> String? {
    // Kept in the store's own slots, so the claims live and end with that `CaskStore`.
    let claims = store.extensions.slot("CipherCask.defaultNames") { Claims() }
    let owner = claims.names.withLock { names in
      if let owner = names[name] { return owner }
      names[name] = ObjectIdentifier(type)
      return ObjectIdentifier(type)
    }
    guard owner != ObjectIdentifier(type) else { return nil }
    return "the default collection name '\(name)' of \(String(reflecting: type)) is already the name of "
      + "another type's collection in this store; give one of them a name: collection(_:named:)"
  }
}

extension CaskStore {
  /// The store's directory with links, `.`, `..` and repeated or trailing slashes resolved,
  /// so that every spelling of one store's path (`s.cask`, `./s.cask/`, a link to it) is one
  /// key: for what is kept per store in this process (sync turns).
  package var resolvedPath: String {
    guard let resolved = realpath(path, nil) else { return URL(fileURLWithPath: path).standardizedFileURL.path }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
