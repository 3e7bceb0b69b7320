import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// When a model changes between versions of an app, objects saved by the old version must stay
/// readable where Docs/GUIDE.md says they do (a field added as optional, a field removed, a
/// field renamed with CodingKeys or a custom `init(from:)`), with every coder; and where they
/// cannot be (a field added as non-optional, a type changed), the failure must be
/// `CollectionError.decoding`, which `all(onDecodingFailure: .skip)` can step over.
@Suite("Old objects survive model changes as documented")
struct SchemaDriftTests {
  /// Version 1 of a model.
  struct ItemV1: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
    var count: Int
  }

  /// Version 2 adds an optional field.
  struct ItemAddedOptional: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
    var count: Int
    var nickname: String?
  }

  /// Version 2 adds a non-optional field: old objects no longer decode.
  struct ItemAddedRequired: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var count: Int
    var score: Int
  }

  /// Version 2 adds a field with a default value but not optional: old objects no longer
  /// decode either (synthesized `Decodable` ignores the default).
  struct ItemAddedDefaulted: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var count: Int
    var score = 0
  }

  /// Version 2 removes `count`.
  struct ItemRemovedField: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
  }

  /// Version 2 renames `count` to `total`, keeping the stored key with CodingKeys.
  struct ItemRenamedWithKeys: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
    var total: Int

    enum CodingKeys: String, CodingKey {
      case id, name
      case total = "count"
    }
  }

  /// Version 2 renames `count` to `total` in storage too, reading either key.
  struct ItemRenamedWithInit: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var name: String
    var total: Int

    enum CodingKeys: String, CodingKey {
      case id, name, total
      case legacyCount = "count"
    }

    init(id: String, name: String, total: Int) {
      self.id = id
      self.name = name
      self.total = total
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      id = try container.decode(String.self, forKey: .id)
      name = try container.decode(String.self, forKey: .name)
      total =
        try container.decodeIfPresent(Int.self, forKey: .total)
        ?? container.decode(Int.self, forKey: .legacyCount)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(id, forKey: .id)
      try container.encode(name, forKey: .name)
      try container.encode(total, forKey: .total)
    }
  }

  /// Version 2 changes `count` from Int to String: old objects no longer decode.
  struct ItemChangedType: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var count: String
  }

  private static func coder(_ name: String) -> any CaskCoder {
    switch name {
    case "json": JSONCaskCoder()
    case "binary": BinaryCaskCoder()
    default: PropertyListCaskCoder()
    }
  }

  /// Runs `body` with a store holding two version-1 items saved with the named coder.
  private func withOldItems(_ coderName: String, _ body: (CaskStore, any CaskCoder) throws -> Void) throws {
    try withStore("drift-\(coderName)") { store throws in
      let coder = Self.coder(coderName)
      try store.collection(ItemV1.self, named: "items", coder: coder).save(contentsOf: [
        ItemV1(id: "i1", name: "one", count: 1), ItemV1(id: "i2", name: "two", count: 2),
      ])
      try body(store, coder)
    }
  }

  @Test("a field added as optional reads as nil from old objects", arguments: ["json", "binary", "plist"])
  func addedOptionalFieldReadsNil(coder name: String) throws {
    try withOldItems(name) { store, coder throws in
      let items = store.collection(ItemAddedOptional.self, named: "items", coder: coder)
      #expect(try items.get(id: "i1") == ItemAddedOptional(id: "i1", name: "one", count: 1, nickname: nil))
      try items.update(id: "i2") { $0.nickname = "deux" }
      #expect(try items.get(id: "i2")?.nickname == "deux")
      // The old model still reads objects the new one wrote.
      let old = store.collection(ItemV1.self, named: "items", coder: coder)
      #expect(try old.get(id: "i2") == ItemV1(id: "i2", name: "two", count: 2))
    }
  }

  @Test("a removed field is ignored in old objects", arguments: ["json", "binary", "plist"])
  func removedFieldIsIgnored(coder name: String) throws {
    try withOldItems(name) { store, coder throws in
      let items = store.collection(ItemRemovedField.self, named: "items", coder: coder)
      #expect(try items.all().sorted { $0.id < $1.id } == [.init(id: "i1", name: "one"), .init(id: "i2", name: "two")])
    }
  }

  @Test(
    "a field renamed with CodingKeys or a custom init(from:) reads old objects", arguments: ["json", "binary", "plist"])
  func renamedFieldReadsOldObjects(coder name: String) throws {
    try withOldItems(name) { store, coder throws in
      let keyed = store.collection(ItemRenamedWithKeys.self, named: "items", coder: coder)
      #expect(try keyed.get(id: "i1") == ItemRenamedWithKeys(id: "i1", name: "one", total: 1))
      let migrating = store.collection(ItemRenamedWithInit.self, named: "items", coder: coder)
      #expect(try migrating.get(id: "i2") == ItemRenamedWithInit(id: "i2", name: "two", total: 2))
      try migrating.save(ItemRenamedWithInit(id: "i3", name: "three", total: 3))
      #expect(try migrating.get(id: "i3")?.total == 3)
      #expect(try migrating.all().count == 3)
    }
  }

  @Test(
    "a field added as non-optional (even with a default), or a changed type, fails with CollectionError.decoding",
    arguments: ["json", "binary", "plist"])
  func incompatibleChangesFailWithDecoding(coder name: String) throws {
    try withOldItems(name) { store, coder throws in
      let required = store.collection(ItemAddedRequired.self, named: "items", coder: coder)
      #expect(throws: CollectionError.decoding(collection: "items", id: "i1", underlying: CancellationError())) {
        try required.get(id: "i1")
      }
      try required.save(ItemAddedRequired(id: "i3", name: "three", count: 3, score: 9))
      let readable = try required.all(onDecodingFailure: .skip)
      #expect(readable.objects.map(\.id) == ["i3"])
      #expect(readable.failures.count == 2)
      let defaulted = store.collection(ItemAddedDefaulted.self, named: "items", coder: coder)
      #expect(throws: CollectionError.decoding(collection: "items", id: "i1", underlying: CancellationError())) {
        try defaulted.get(id: "i1")
      }
      let changed = store.collection(ItemChangedType.self, named: "items", coder: coder)
      #expect(throws: CollectionError.decoding(collection: "items", id: "i2", underlying: CancellationError())) {
        try changed.get(id: "i2")
      }
    }
  }
}
