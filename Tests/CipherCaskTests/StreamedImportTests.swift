import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `importJSON(contentsOf:)`: JSON arrays and JSON Lines read from real files, one atomic
/// batch, errors that name the line (and array position), and nothing written on any error.
@Suite("Streamed JSON imports from files")
struct StreamedImportTests {
  /// One event as a line of the Core Data events example's JSON.
  static func eventLine(_ id: String, city: String = "Utrecht") -> String {
    #"{"title": "T \#(id)", "date": "2026-03-01T18:00:00Z", "venue": "V", "city": "\#(city)", "#
      + #""country": "NL", "attendees": ["ann"], "eventId": "\#(id)"}"#
  }

  static func write(_ text: String, _ name: String, in directory: TemporaryDirectory) throws -> URL {
    let url = URL(fileURLWithPath: directory.file(name))
    try Data(text.utf8).write(to: url)
    return url
  }

  @Test("JSON Lines and a JSON array import the same objects, with a BOM and CRLF line ends")
  func bothShapesImport() throws {
    try withTemporaryDirectory("streamed") { directory in
      let ids = (1...50).map { "e\($0)" }
      let lines = try Self.write(
        "\u{FEFF}" + ids.map { Self.eventLine($0) }.joined(separator: "\r\n") + "\r\n\r\n", "events.jsonl",
        in: directory)
      let array = try Self.write(
        "\u{FEFF}[\r\n" + ids.map { Self.eventLine($0) }.joined(separator: ",\r\n") + "\r\n]\r\n", "events.json",
        in: directory)
      try withStore { store in
        let fromLines = store.collection(Event.self, named: "lines")
        let fromArray = store.collection(Event.self, named: "array")
        var seen: [ImportProgress] = []
        let result = try fromLines.importJSON(contentsOf: lines, decoder: .events) { seen.append($0) }
        #expect(result == .init(inserted: 50, replaced: 0))
        #expect(try fromArray.importJSON(contentsOf: array, decoder: .events) == .init(inserted: 50, replaced: 0))
        #expect(try fromLines.ids().sorted() == ids.sorted())
        #expect(try fromLines.all().sorted { $0.id < $1.id } == fromArray.all().sorted { $0.id < $1.id })
        #expect(seen.map(\.objects) == Array(1...50))
        let size = UInt64(try FileDamage.size(of: lines.path))
        #expect(seen.allSatisfy { $0.totalBytes == size && $0.bytesRead <= size })
        #expect(seen.last.map { $0.bytesRead >= size - 4 } == true)
        // Again: every id is replaced now.
        #expect(try fromLines.importJSON(contentsOf: lines, decoder: .events) == .init(inserted: 0, replaced: 50))
      }
    }
  }

  @Test("an empty file, a blank one and an empty array import nothing and write nothing")
  func emptyInputsWriteNothing() throws {
    try withTemporaryDirectory("streamed-empty") { directory in
      try withStore { store in
        let events = store.collection(Event.self)
        let log = CommitLog(store)
        for (name, text) in [("empty.jsonl", ""), ("blank.jsonl", "\n \r\n\n"), ("empty.json", " [ ] \n")] {
          let url = try Self.write(text, name, in: directory)
          #expect(try events.importJSON(contentsOf: url, decoder: .events) == .init(inserted: 0, replaced: 0))
        }
        #expect(log.commits.isEmpty)
        #expect(store.count == 0)
      }
    }
  }

  @Test(
    "a malformed or mistyped object at line N is reported at line N and nothing is written",
    arguments: [1, 2, 37, 400])
  func malformedObjectAtLineN(line: Int) throws {
    try withTemporaryDirectory("streamed-bad") { directory in
      var lines = (1...400).map { Self.eventLine("e\($0)") }
      lines[line - 1] = line % 2 == 0 ? #"{"title": "broken", oops}"# : #"{"title": 5, "eventId": "x"}"#
      let url = try Self.write(lines.joined(separator: "\n") + "\n", "bad.jsonl", in: directory)
      try withStore { store in
        let events = store.collection(Event.self)
        let log = CommitLog(store)
        let error = #expect(throws: CollectionError.self) { try events.importJSON(contentsOf: url, decoder: .events) }
        guard case .invalidImport(let reason, let reported) = error else {
          Issue.record("expected invalidImport, got \(String(describing: error))")
          return
        }
        #expect(reported == line)
        #expect(!reason.contains("broken"))
        #expect(log.commits.isEmpty)
        #expect(store.count == 0)
      }
    }
  }

  @Test("an array element that does not decode is reported with its line and its position")
  func arrayElementReportsLineAndPosition() throws {
    try withTemporaryDirectory("streamed-array") { directory in
      // Elements 1 and 2 on line 2, element 3 (mistyped) on line 3.
      let text =
        "[\n" + Self.eventLine("a") + ", " + Self.eventLine("b") + ",\n"
        + #"{"title": [], "eventId": "c"}"# + "\n]"
      let url = try Self.write(text, "bad.json", in: directory)
      try withStore { store in
        let events = store.collection(Event.self)
        let error = #expect(throws: CollectionError.self) { try events.importJSON(contentsOf: url, decoder: .events) }
        guard case .invalidImport(let reason, let line) = error else {
          Issue.record("expected invalidImport, got \(String(describing: error))")
          return
        }
        #expect(line == 3)
        #expect(reason.hasPrefix("element 3: "), "\(reason)")
        #expect(store.count == 0)
      }
    }
  }

  @Test("an array that is not closed, or text after it, is refused and nothing is written")
  func brokenArraysAreRefused() throws {
    try withTemporaryDirectory("streamed-unclosed") { directory in
      try withStore { store in
        let events = store.collection(Event.self)
        for (name, text) in [
          ("unclosed.json", "[" + Self.eventLine("a")), ("inside.json", "[" + Self.eventLine("a") + ", {\"x\": "),
          ("after.json", "[" + Self.eventLine("a") + "] x"), ("number.json", "[1]"),
        ] {
          let url = try Self.write(text, name, in: directory)
          #expect(throws: CollectionError.self, "\(name)") { try events.importJSON(contentsOf: url, decoder: .events) }
        }
        #expect(store.count == 0)
      }
    }
  }

  @Test("a line longer than the maximum object length is refused with a clear error, nothing written")
  func hugeLineIsRefused() throws {
    try withTemporaryDirectory("streamed-huge") { directory in
      let huge = #"{"title": ""# + String(repeating: "x", count: 300_000) + #""}"#
      let url = try Self.write(
        Self.eventLine("a") + "\n" + huge + "\n" + Self.eventLine("b"), "huge.jsonl", in: directory)
      try withStore { store in
        let events = store.collection(Event.self)
        let error = #expect(throws: CollectionError.self) {
          try events.importJSON(contentsOf: url, decoder: .events, maximumObjectLength: 100_000)
        }
        #expect(
          error
            == .invalidImport(
              reason: "an object is longer than 100000 bytes, the most an import reads as one object", line: 2))
        #expect(store.count == 0)
        // Under a higher limit, the line is read (and refused as an Event for its fields).
        #expect(throws: CollectionError.self) {
          try events.importJSON(contentsOf: url, decoder: .events, maximumObjectLength: 1 << 20)
        }
      }
    }
  }

  @Test("a unique-index violation anywhere in the file writes nothing")
  func uniqueViolationWritesNothing() throws {
    try withTemporaryDirectory("streamed-unique") { directory in
      let encoder = JSONEncoder()
      let gigs =
        (1...20).map { Gig.make("g\($0)", email: $0 == 17 ? "same@example.com" : "g\($0)@example.com") }
        + [Gig.make("g21", email: "same@example.com")]
      let text = try gigs.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n")
      let url = try Self.write(text, "gigs.jsonl", in: directory)
      try withIndexStore { store, _ in
        let collection = store.gigs()
        #expect(throws: CollectionError.uniqueViolation(collection: "gigs", index: "email")) {
          try collection.importJSON(contentsOf: url)
        }
        #expect(collection.count == 0)
        #expect(store.count == 0)
      }
    }
  }

  @Test("a file that does not exist throws and writes nothing")
  func missingFileThrows() throws {
    try withStore { store in
      let events = store.collection(Event.self)
      #expect(throws: (any Error).self) {
        try events.importJSON(contentsOf: URL(fileURLWithPath: "/nonexistent/cask-import.jsonl"))
      }
      #expect(store.count == 0)
    }
  }

  @Test("the async form imports the same, and a task cancelled first writes nothing")
  func asyncImport() async throws {
    try await withTemporaryDirectory("streamed-async") { directory in
      let url = try Self.write(
        (1...10).map { Self.eventLine("e\($0)") }.joined(separator: "\n"), "e.jsonl", in: directory)
      try await withStore { store in
        let events = store.collection(Event.self)
        let task = Task {
          withUnsafeCurrentTask { $0?.cancel() }
          return try await events.importJSON(contentsOf: url, decoder: .events)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(store.count == 0)
        let result = try await events.importJSON(contentsOf: url, decoder: .events)
        #expect(result == .init(inserted: 10, replaced: 0))
      }
    }
  }
}
