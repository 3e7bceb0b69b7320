import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `JSONRecordReader` cuts the same objects out of an input however it arrives: chunk
/// boundaries may fall anywhere (inside a string, an escape, a CR LF, a byte order mark).
@Suite("JSON records read the same in any chunking")
struct JSONRecordReaderTests {
  /// A random JSON object whose strings hold braces, brackets, quotes, escapes and commas.
  static func object(_ index: Int, _ random: inout SeededRandom) -> String {
    let pieces = ["{", "}", "[", "]", ",", "\\\"", "\\\\", "\\n", "é", "x", " ", ":"]
    var text = ""
    for _ in 0..<Int.random(in: 0...12, using: &random) { text += pieces.randomElement(using: &random) ?? "" }
    let nested = Int.random(in: 0...3, using: &random)
    return #"{"id": \#(index), "s": "\#(text)", "n": \#(String(repeating: "[", count: nested))"#
      + #"{"k": "\#(text)"}\#(String(repeating: "]", count: nested))}"#
  }

  /// Every record of `input`, read `chunk(…)` bytes at a time.
  static func records(_ input: Data, chunk: @escaping (Int) -> Int) throws -> [JSONRecord] {
    var offset = input.startIndex
    let reader = JSONRecordReader { _ in
      let end = min(input.endIndex, offset + chunk(input.endIndex - offset))
      defer { offset = end }
      return input[offset..<end]
    }
    var records: [JSONRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
  }

  @Test("arrays and JSON Lines give the same objects, lines, positions and offsets in any chunking")
  func anyChunkingReadsTheSame() throws {
    var random = SeededRandom.make(test: "JSONRecordReaderTests.anyChunking")
    for _ in 0..<testIterations(40) {
      let objects = (0..<Int.random(in: 1...30, using: &random)).map { Self.object($0, &random) }
      let newline = Bool.random(using: &random) ? "\r\n" : "\n"
      let bom = Bool.random(using: &random) ? "\u{FEFF}" : ""
      for (input, firstLine) in [
        (bom + objects.joined(separator: newline) + newline, 1),
        (bom + "[" + newline + objects.joined(separator: "," + newline) + newline + "]", 2),
      ] {
        let data = Data(input.utf8)
        let whole = try Self.records(data) { $0 }
        #expect(whole.map { String(decoding: $0.bytes, as: UTF8.self) } == objects)
        #expect(whole.map(\.position) == Array(1...objects.count))
        #expect(whole.map(\.line) == Array(firstLine..<firstLine + objects.count))
        for record in whole {
          let start = data.startIndex + Int(record.offset)
          #expect(data[start..<start + record.bytes.count] == record.bytes)
        }
        let seed = random.next()
        var chunks = SeededRandom(seed: seed)
        let pieces = try Self.records(data) { _ in Int.random(in: 1...7, using: &chunks) }
        #expect(pieces.map(\.bytes) == whole.map(\.bytes), "chunk seed \(seed)")
        #expect(pieces.map(\.line) == whole.map(\.line))
        #expect(pieces.map(\.offset) == whole.map(\.offset))
      }
    }
  }
}
