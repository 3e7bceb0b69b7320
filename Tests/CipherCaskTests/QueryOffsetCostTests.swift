import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// What a deep page costs where no id is checked: the offset is skipped by rank, so the
/// sorted pages of a checkpoint a query reads (counted by the bytes the page cache then holds)
/// are the same few at offset 0 and near the end, not every page between.
@Suite("Query offsets skipped by rank")
struct QueryOffsetCostTests {
  struct Note: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var text: String
    var shelf: String
  }

  static let count = 3_000

  /// Entries of about 260 bytes (a shelf's) and 470 (a text's): the 1,500 entries of a shelf
  /// fill about 12 of a checkpoint's sorted pages of 32 KiB, the 3,000 of the texts about 40.
  static func note(_ number: Int) -> Note {
    Note(
      id: String(format: "n%05d-", number) + String(repeating: "i", count: 250),
      text: String(format: "%05d", (number * 7_919) % count) + String(repeating: "x", count: 200),
      shelf: "s\(number % 2)")
  }

  static let indexes: [CaskIndex<Note>] = [.index("text", \.text), .index("shelf", \.shelf)]

  static func options() -> CaskStore.Options {
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    options.checkpoints = CaskStore.Checkpoints(interval: 1 << 40, minimumKeys: 1)
    return options
  }

  static let keys = try! RNCryptor.Keys(
    encryptionKey: Data(repeating: 0x51, count: 32), hmacKey: Data(repeating: 0x62, count: 32))

  /// The ids `query` gives on a store opened afresh from its checkpoint, and the bytes of
  /// sorted pages it read.
  private func pageAndPagesRead(
    _ path: String, _ query: (CaskCollection<Note>) -> CaskQuery<Note>
  ) throws -> (ids: [String], bytes: Int) {
    let store = try CaskStore(path: path, keys: Self.keys, options: Self.options())
    defer { try? store.close() }
    #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
    let notes = store.collection(Note.self, named: "notes", indexes: Self.indexes)
    let before = store.stats().sortedPageCacheBytes
    let ids = try query(notes).ids()
    return (ids, store.stats().sortedPageCacheBytes - before)
  }

  @Test("a page near the end of a sort index or of one text reads as many sorted pages as the first page")
  func deepOffsetReadsFewPages() throws {
    try withTemporaryDirectory("query-offset-cost") { directory in
      let path = directory.file("store")
      let all = (0..<Self.count).map(Self.note)
      do {
        let store = try CaskStore(path: path, keys: Self.keys, options: Self.options())
        try store.collection(Note.self, named: "notes", indexes: Self.indexes).save(contentsOf: all)
        try store.close()
      }
      let byText = all.sorted { $0.text < $1.text }.map(\.id)
      let onShelf = all.filter { $0.shelf == "s1" }.map(\.id)
      let whole = try pageAndPagesRead(path) { $0.query().sorted(by: \.text) }
      #expect(whole.ids == byText)
      for ascending in [true, false] {
        let expected = ascending ? byText : byText.reversed()
        let first = try pageAndPagesRead(path) { $0.query().sorted(by: \.text, ascending: ascending).limit(5) }
        let deep = try pageAndPagesRead(path) {
          $0.query().sorted(by: \.text, ascending: ascending).offset(Self.count - 10).limit(5)
        }
        #expect(first.ids == Array(expected.prefix(5)))
        #expect(deep.ids == Array(expected.dropFirst(Self.count - 10).prefix(5)))
        // A walk of the skipped entries would read nearly every page the whole walk reads;
        // the skip reads the page it lands in and perhaps the next.
        #expect(first.bytes > 0)
        #expect(4 * deep.bytes <= whole.bytes, "whole walk \(whole.bytes) bytes of pages, deep page \(deep.bytes)")
      }
      let shelf = try pageAndPagesRead(path) { $0.query().where(\.shelf, equals: "s1") }
      let deep = try pageAndPagesRead(path) { $0.query().where(\.shelf, equals: "s1").offset(onShelf.count - 3) }
      #expect(shelf.ids == onShelf)
      #expect(deep.ids == Array(onShelf.suffix(3)))
      #expect(4 * deep.bytes <= shelf.bytes, "whole shelf \(shelf.bytes) bytes of pages, deep page \(deep.bytes)")
    }
  }
}
