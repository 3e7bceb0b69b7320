import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `importJSON(contentsOf:)` as one streamed batch: a failure anywhere, even after most of the
/// file was appended to the log, leaves the store as it was (no object, no index entry, no
/// byte); a unique violation found at the end refuses the whole import; a repeated id keeps
/// its last object in the collection and in its indexes.
@Suite("Streamed imports are one atomic batch")
struct StreamedImportBatchTests {
  static let indexes: [CaskIndex<CrashItem>] = [
    .index("owner", \.owner), .index("tag", each: \.tags), .unique("email", \.email),
  ]

  static func item(_ index: Int, owner: String = "ana", email: String? = nil) -> CrashItem {
    CrashItem(
      id: "i\(index)", owner: owner, rank: index % 10, tags: ["t\(index % 3)"],
      email: email ?? "i\(index)@example.com", origin: "\(index)")
  }

  static func lines(_ items: [CrashItem]) throws -> String {
    let encoder = JSONEncoder()
    return try items.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n") + "\n"
  }

  /// The bytes of the store's segments up to the last non-zero byte of each: what the log
  /// holds, without the zeros the writer reserves ahead of itself (which an aborted batch cuts
  /// together with its records).
  static func segmentBytes(in path: String) throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }
      .reduce(0) { total, name in
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        return total + ((bytes.lastIndex { $0 != 0 }).map { $0 + 1 } ?? 0)
      }
  }

  @Test("a malformed line near the end of a large file: reported by line, no object and no byte written")
  func malformedLineNearTheEnd() throws {
    try withTemporaryDirectory("streamed-late-error") { directory in
      var text = try Self.lines((0..<20_000).map { Self.item($0) })
      text += #"{"id": "late", oops}"# + "\n" + (try Self.lines([Self.item(20_001)]))
      let url = URL(fileURLWithPath: directory.file("late.jsonl"))
      try Data(text.utf8).write(to: url)
      try withStore(label: "streamed-late") { store, path throws in
        let items = store.collection(CrashItem.self, named: "items", indexes: Self.indexes)
        try items.save(Self.item(-1))
        let before = try Self.segmentBytes(in: path)
        let error = #expect(throws: CollectionError.self) { try items.importJSON(contentsOf: url) }
        guard case .invalidImport(_, let line) = error else {
          Issue.record("expected invalidImport, got \(String(describing: error))")
          return
        }
        #expect(line == 20_001)
        #expect(try Self.segmentBytes(in: path) == before, "the aborted import left bytes in the log")
        #expect(items.count == 1)
        #expect(try items.query().where(\.owner, equals: "ana").ids() == ["i-1"])
        #expect(try items.verifyIndexes().isConsistent)
      }
    }
  }

  @Test("a unique violation between the first and last objects of an import refuses all of it")
  func uniqueViolationRefusesEverything() throws {
    try withTemporaryDirectory("streamed-unique") { directory in
      var objects = (0..<3_000).map { Self.item($0) }
      objects.append(Self.item(5_000, email: "i7@example.com"))
      let url = URL(fileURLWithPath: directory.file("unique.jsonl"))
      try Data(Self.lines(objects).utf8).write(to: url)
      try withStore(label: "streamed-unique") { store, path throws in
        let items = store.collection(CrashItem.self, named: "items", indexes: Self.indexes)
        let stored = Self.item(-1, email: "stored@example.com")
        try items.save(stored)
        let before = try Self.segmentBytes(in: path)
        #expect(throws: CollectionError.uniqueViolation(collection: "items", index: "email")) {
          try items.importJSON(contentsOf: url)
        }
        #expect(try Self.segmentBytes(in: path) == before)
        #expect(try items.all() == [stored])
        #expect(try items.verifyIndexes().isConsistent)
        // An object of the file colliding with one already stored is refused as well.
        try Data(Self.lines([Self.item(1), Self.item(2, email: "stored@example.com")]).utf8).write(to: url)
        #expect(throws: CollectionError.uniqueViolation(collection: "items", index: "email")) {
          try items.importJSON(contentsOf: url)
        }
        #expect(items.count == 1)
      }
    }
  }

  @Test("while an import runs, readers on its own thread and on another see none of its objects")
  func readersSeeNothingDuringImport() throws {
    try withTemporaryDirectory("streamed-readers") { directory in
      let url = URL(fileURLWithPath: directory.file("many.jsonl"))
      try Data(Self.lines((0..<2_000).map { Self.item($0) }).utf8).write(to: url)
      try withStore(label: "streamed-readers") { store, _ throws in
        let items = store.collection(CrashItem.self, named: "items", indexes: Self.indexes)
        try items.save(Self.item(-1))
        var checks = 0
        try items.importJSON(contentsOf: url) { progress in
          guard progress.objects % 500 == 0 else { return }
          checks += 1
          #expect(items.count == 1)
          #expect((try? items.get(id: "i0")) == .some(nil))
          // Another thread: readers take no writer lock, so this neither waits nor sees the batch.
          let seen = DispatchQueue.global().sync {
            (items.count, try? items.query().where(\.owner, equals: "ana").ids())
          }
          #expect(seen.0 == 1 && seen.1 == ["i-1"])
        }
        #expect(checks == 4)
        #expect(items.count == 2_001)
        #expect(try items.verifyIndexes().isConsistent)
      }
    }
  }

  @Test("an id repeated in one import: counted once, its last object stored and indexed, the first's entries gone")
  func repeatedIDLastWins() throws {
    try withTemporaryDirectory("streamed-repeat") { directory in
      let first = Self.item(1, owner: "bo", email: "first@example.com")
      var last = Self.item(1, owner: "cy", email: "last@example.com")
      last.tags = ["late"]
      let url = URL(fileURLWithPath: directory.file("repeat.jsonl"))
      try Data(Self.lines([first, Self.item(2), last]).utf8).write(to: url)
      try withStore(label: "streamed-repeat") { store, _ throws in
        let items = store.collection(CrashItem.self, named: "items", indexes: Self.indexes)
        #expect(try items.importJSON(contentsOf: url) == .init(inserted: 2, replaced: 0))
        #expect(try items.get(id: "i1") == last)
        #expect(try items.query().where(\.owner, equals: "bo").ids().isEmpty)
        #expect(try items.query().where(\.owner, equals: "cy").ids() == ["i1"])
        #expect(try items.query().where(\.email, equals: "first@example.com").ids().isEmpty)
        #expect(try items.query().where(\.tags, contains: "late").ids() == ["i1"])
        #expect(try items.verifyIndexes().isConsistent)
        // Imported again: both ids are replaced, still counted once each.
        #expect(try items.importJSON(contentsOf: url) == .init(inserted: 0, replaced: 2))
      }
    }
  }
}
