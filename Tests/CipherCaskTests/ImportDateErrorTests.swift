import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// An import whose date does not read names the field and the form it expects, and never
/// the text it found.
@Suite("Import errors for dates name the field and the form")
struct ImportDateErrorTests {
  struct Session: Codable, Identifiable, Sendable {
    struct Room: Codable, Sendable {
      var name: String
      var openedAt: Date
    }

    var id: String
    var startDate: Date
    var room: Room?
    var link: URL?
  }

  static let bad = "31/01/2026"
  static let expected = "expected an ISO 8601 date such as 2026-01-31T18:00:00Z"

  static var decoder: JSONDecoder {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return decoder
  }

  static func line(_ id: String, start: String, opened: String = "2026-01-01T00:00:00Z") -> String {
    #"{"id":"\#(id)","start_date":"\#(start)","room":{"name":"A","opened_at":"\#(opened)"}}"#
  }

  /// The description of what `body` throws, or nil when it throws nothing.
  private static func failure(_ body: () throws -> Void) -> String? {
    do {
      try body()
      return nil
    } catch {
      return String(describing: error)
    }
  }

  @Test("importJSON of an array names the element's field, nested fields too, and writes nothing")
  func arrayInMemory() throws {
    try withStore("import-date-array") { store in
      let sessions = store.collection(Session.self)
      let top = "[\(Self.line("s1", start: "2026-01-01T10:00:00Z")),\(Self.line("s2", start: Self.bad))]"
      #expect(
        Self.failure { try sessions.importJSON(Data(top.utf8), decoder: Self.decoder) }
          == "invalid import: malformed data at '1.startDate': \(Self.expected)")
      let nested = "[\(Self.line("s1", start: "2026-01-01T10:00:00Z", opened: Self.bad))]"
      #expect(
        Self.failure { try sessions.importJSON(Data(nested.utf8), decoder: Self.decoder) }
          == "invalid import: malformed data at '0.room.openedAt': \(Self.expected)")
      #expect(sessions.count == 0)
    }
  }

  @Test("a streamed import of JSON Lines or an array names the line or element and the field")
  func streamedFiles() throws {
    try withStore("import-date-file") { store in
      let sessions = store.collection(Session.self)
      let directory = try TemporaryDirectory("import-date-input")
      defer { directory.remove() }
      let lines = URL(fileURLWithPath: directory.file("sessions.jsonl"))
      try Data((Self.line("s1", start: "2026-01-01T10:00:00Z") + "\n" + Self.line("s2", start: Self.bad)).utf8)
        .write(to: lines)
      let linesError = Self.failure { try sessions.importJSON(contentsOf: lines, decoder: Self.decoder) }
      #expect(linesError == "invalid import at line 2: malformed data at 'startDate': \(Self.expected)")
      let array = URL(fileURLWithPath: directory.file("sessions.json"))
      try Data("[\n\(Self.line("s1", start: "2026-01-01T10:00:00Z", opened: Self.bad))\n]".utf8).write(to: array)
      let arrayError = Self.failure { try sessions.importJSON(contentsOf: array, decoder: Self.decoder) }
      #expect(
        arrayError == "invalid import at line 2: element 1: malformed data at 'room.openedAt': \(Self.expected)")
      for error in [linesError, arrayError] { #expect(!(error ?? "").contains(Self.bad)) }
      #expect(sessions.count == 0)
    }
  }

  @Test("a URL that does not read is named with the form expected, without its text")
  func malformedURL() throws {
    try withStore("import-url-error") { store in
      let sessions = store.collection(Session.self)
      let text = #"[{"id":"s1","start_date":"2026-01-01T10:00:00Z","link":""}]"#
      #expect(
        Self.failure { try sessions.importJSON(Data(text.utf8), decoder: Self.decoder) }
          == "invalid import: malformed data at '0.link': expected a URL")
    }
  }
}
