import Foundation

extension CaskCollection {
  /// Checks that the stored entries of every ready index are exactly what the objects give
  /// (indexes being built are left out): every object decoded, its entries worked out and
  /// compared with the stored keys, and the in-memory entries compared with the stored ones.
  ///
  /// - Returns: per index, how many entries are missing and how many are extra (never a
  ///   value or an id).
  /// - Complexity: O(n) reads and decodes.
  public func verifyIndexes() throws -> IndexVerification {
    try checkName()
    guard let definition = indexDefinition else { return IndexVerification(objects: count, indexes: [:]) }
    let runtime = IndexRuntime.of(store)
    let ready = Set(try readyIndexes())
    let check = { () throws -> IndexVerification in
      var report = IndexVerification(objects: 0, indexes: [:])
      var expected: [[String: Set<ByteString>]] = definition.descriptors.map { _ in [:] }
      var failures: [CollectionError] = []
      try forEachObject(onDecodingFailure: .skip, failures: &failures) { object in
        report.objects += 1
        let texts = definition.texts(of: object)
        for position in texts.indices {
          expected[position][object.id.description] = Set(texts[position].map(ByteString.init))
        }
      }
      // An object that does not decode has entries nobody can check: reported, and the
      // indexes are not called consistent while one exists.
      report.undecodableObjects = failures.count
      report.decodingFailure = failures.first
      for (position, descriptor) in definition.descriptors.enumerated() where ready.contains(descriptor.name) {
        let entries = try runtime.state.withLock { state in try runtime.entries(descriptor.group, in: &state) }
        // What the store holds, read again from its keys (not the in-memory entries).
        let stored = IndexEntries(
          keys: try store.packedKeys(inGroup: descriptor.group), prefixLength: descriptor.group.utf8.count + 1)
        var difference = IndexVerification.Difference()
        for (id, texts) in expected[position] {
          let have = Set(stored.texts(of: id).map(ByteString.init))
          difference.missing += texts.subtracting(have).count
          difference.extra += have.subtracting(texts).count
        }
        stored.forEachID { id, texts in
          if expected[position][id] == nil { difference.extra += texts.count }
        }
        difference.memoryDiffers = !entries.sameEntries(as: stored)
        report.indexes[descriptor.name] = difference
      }
      return report
    }
    // In a transaction where the store can be written: no commit comes between reading the
    // objects and the entries.
    return try store.options.readOnly ? check() : store.transaction { _ in try check() }
  }
}

/// What `verifyIndexes()` found.
public struct IndexVerification: Sendable, Equatable {
  /// For one index: entries the objects call for that the store lacks, and entries the store
  /// holds that no object calls for.
  public struct Difference: Sendable, Equatable {
    public var missing = 0
    public var extra = 0
    /// Whether the in-memory entries differ from the stored ones.
    public var memoryDiffers = false

    public var isEmpty: Bool { missing == 0 && extra == 0 && !memoryDiffers }

    public init(missing: Int = 0, extra: Int = 0, memoryDiffers: Bool = false) {
      self.missing = missing
      self.extra = extra
      self.memoryDiffers = memoryDiffers
    }
  }

  /// Objects checked.
  public var objects: Int
  /// By index name: the ready indexes checked.
  public var indexes: [String: Difference]
  /// Stored objects that do not decode as the collection's type (not counted in `objects`):
  /// their entries cannot be checked, and a build or a write of them fails.
  public var undecodableObjects = 0
  /// The first such object's error (`CollectionError.decoding`, as `all()` throws it).
  public var decodingFailure: CollectionError?

  /// Whether every index agrees with the objects, and every object decodes.
  public var isConsistent: Bool { undecodableObjects == 0 && indexes.values.allSatisfy(\.isEmpty) }
}
