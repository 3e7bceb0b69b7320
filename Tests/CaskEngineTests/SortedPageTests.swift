import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// The sorted pages of a checkpoint one by one: their encoding, their binding to their place,
/// their damage, and the cache they are read through.
@Suite("Sorted pages: encoding, binding, damage and the cache bound")
struct SortedPageTests {
  static let group = "\u{1}idx"

  /// Keys with long shared prefixes, as index entries have.
  static func entry(_ number: Int) -> String {
    "text-\(number % 37)-with-a-shared-part\u{0}id-\(number)"
  }

  @Test("keys split into pages and decoded again are the same keys, in order")
  func roundTrip() throws {
    let keys = (0..<20_000).map { Array(Self.entry($0).utf8) }.sorted { SortedKeyOrder.compare($0, $1) < 0 }
    var builder = SortedKeyPages.Builder()
    for key in keys { key.withUnsafeBytes { builder.append($0) } }
    let pages = builder.finish()
    #expect(pages.count > 1)
    var decoded: [[UInt8]] = []
    for (number, page) in pages.enumerated() {
      #expect(page.contents.count <= CaskFormat.checkpointSortedPageTarget)
      let next = number + 1 < pages.count ? pages[number + 1].firstKey : nil
      let keys = try #require(
        page.contents.withUnsafeBytes {
          SortedKeyPages.decode($0, count: page.count, firstKey: page.firstKey, nextFirstKey: next)
        })
      for index in 0..<keys.count { decoded.append(keys.withKey(index) { Array($0) }) }
    }
    #expect(decoded == keys)
    // Prefix compression: well under the keys' own bytes.
    #expect(pages.reduce(0) { $0 + $1.contents.count } < keys.reduce(0) { $0 + $1.count } / 2)
  }

  @Test("a page whose keys are out of order, whose first key is not the root's, or past the next page's, is refused")
  func decodeRefusesMisplacedKeys() throws {
    var builder = SortedKeyPages.Builder()
    for key in ["a", "b", "c"] { Array(key.utf8).withUnsafeBytes { builder.append($0) } }
    let page = try #require(builder.finish().first)
    func decode(first: String, next: String?, count: Int = 3) -> SortedPage? {
      page.contents.withUnsafeBytes {
        SortedKeyPages.decode($0, count: count, firstKey: Array(first.utf8), nextFirstKey: next.map { Array($0.utf8) })
      }
    }
    #expect(decode(first: "a", next: "d") != nil)
    #expect(decode(first: "b", next: "d") == nil)
    #expect(decode(first: "a", next: "c") == nil)
    #expect(decode(first: "a", next: "d", count: 2) == nil)
    var unordered = SortedKeyPages.Builder()
    for key in ["b", "a"] { Array(key.utf8).withUnsafeBytes { unordered.append($0) } }
    let bad = try #require(unordered.finish().first)
    #expect(
      bad.contents.withUnsafeBytes {
        SortedKeyPages.decode($0, count: 2, firstKey: Array("b".utf8), nextFirstKey: nil)
      } == nil)
  }

  @Test("a sorted page asked for as another page number, another group's or another file's is refused")
  func pageBoundToNumberAndGroup() throws {
    let cipher = RecordCipher(keys: CheckpointFixture.keys, version: CaskFormat.formatVersion, epoch: 1)
    var page = ByteWriter()
    page.append(CaskFormat.messageTagCheckpointPage)
    page.append(CaskFormat.checkpointPageSorted)
    page.append(UInt16(0))
    page.append(UInt32(5))
    page.append(UInt32(2))
    page.append(UInt32(1))
    let nonce = Checkpoint.Nonce(first: 0x0102_0304_0506_0708, second: 0x1112_1314_1516_1718)
    page.append(nonce.first)
    page.append(nonce.second)
    page.append(UInt16(0))
    page.append(UInt16(1))
    page.append(UInt8(0x61))
    let message = Array(try cipher.seal(Data(page.bytes)))
    func open(number: Int, table: Int, count: Int, nonce: Checkpoint.Nonce = nonce) -> Bool {
      (try? Checkpoint.openPage(
        message, nonce: nonce, number: number, at: 0, kind: CaskFormat.checkpointPageSorted, table: table,
        count: count, cipher: cipher)) != nil
    }
    #expect(open(number: 5, table: 2, count: 1))
    #expect(!open(number: 6, table: 2, count: 1))
    #expect(!open(number: 5, table: 3, count: 1))
    #expect(!open(number: 5, table: 2, count: 2))
    #expect(!open(number: 5, table: 2, count: 1, nonce: Checkpoint.Nonce(first: nonce.first, second: 0)))
    #expect(!open(number: 5, table: 2, count: 1, nonce: Checkpoint.Nonce(first: 0, second: nonce.second)))
  }

  /// A store whose checkpoint holds `count` keys of the sorted group, reopened from it.
  static func storeWithSortedPages(_ path: String, count: Int, cacheBytes: Int? = nil) throws -> CaskStore {
    let store = try CheckpointFixture.open(path)
    for start in stride(from: 0, to: count, by: 500) {
      try store.batch { batch in
        for number in start..<min(count, start + 500) {
          try batch.put(Data(), forKey: group + "\u{0}" + entry(number))
        }
      }
    }
    try store.close()
    var options = CheckpointFixture.options()
    if let cacheBytes { options.checkpoints?.sortedPageCacheBytes = cacheBytes }
    return try CaskStore(path: path, keys: CheckpointFixture.keys, options: options)
  }

  @Test("a byte flipped in a sorted page: the walk that reads it throws corrupt, and so does every later use")
  func tamperedPageThrowsCorrupt() throws {
    try withTemporaryDirectory("sorted-tamper") { directory in
      let path = directory.file("store")
      try Self.storeWithSortedPages(path, count: 6_000).close()
      // Without tombstones the sorted pages end the file: a byte of the last page's message.
      let file = CheckpointFixture.file(path)
      try FileDamage.flipByte(at: try FileDamage.size(of: file) - 40, in: file)
      let store = try CaskStore(path: path, keys: CheckpointFixture.keys, options: CheckpointFixture.options())
      defer { try? store.close() }
      let view = try #require(try store.sortedView(ofGroup: Self.group))
      #expect(store.stats().recovery.checkpointIgnored == nil)
      #expect(view.count == 6_000)
      #expect(throws: CaskError.self) { try view.walk(from: nil, to: nil) { _ in true } }
      #expect(throws: CaskError.self) { try store.sortedView(ofGroup: Self.group) }
    }
  }

  @Test("random range counts and walks through a small cache: it never holds more than its bound")
  func cacheStaysWithinBound() throws {
    var random = SeededRandom.make(test: "SortedPageTests.cacheStaysWithinBound")
    try withTemporaryDirectory("sorted-cache") { directory in
      let limit = 96 << 10
      let store = try Self.storeWithSortedPages(directory.file("store"), count: 12_000, cacheBytes: limit)
      defer { try? store.close() }
      let view = try #require(try store.sortedView(ofGroup: Self.group))
      var loads = 0
      for _ in 0..<testIterations(100) {
        let lower = Array("text-\(random.next() % 37)".utf8)
        let upper = Array("text-\(random.next() % 37)".utf8)
        _ = try view.count(from: lower, to: upper)
        var seen = 0
        try view.walk(from: lower, to: nil, descending: random.next() % 2 == 0, skipping: Int(random.next() % 3000)) {
          _ in
          seen += 1
          return seen < 1500
        }
        let stats = store.stats()
        #expect(stats.sortedPageCacheBytes <= limit)
        loads = max(loads, seen)
      }
      #expect(store.stats().sortedPageCacheBytes > 0)
      #expect(loads > 0)
    }
  }
}
