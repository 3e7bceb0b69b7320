import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// What the documents say a default or a version is, against what the code does.
@Suite("Documented defaults match the code")
struct DocumentedDefaultsTests {
  private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// A document's text with every run of white space (line breaks too) made one space, so
  /// that a phrase is found wherever the text wraps.
  private static func text(_ name: String) throws -> String {
    let raw = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
    return raw.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
  }

  private static var documents: [String] {
    get throws {
      let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Docs").path)
      return ["README.md", "CHANGELOG.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "Docs/" + $0 }
    }
  }

  struct Note: Codable, Identifiable, Sendable {
    var id: String
    var text: String
  }

  @Test("a collection made without a coder stores binary objects, and no document says JSON is the default")
  func defaultCoderIsBinary() throws {
    try withStore { store, _ in
      let notes = store.collection(Note.self)
      try notes.save(Note(id: "n1", text: "hello"))
      let stored = try store.get(notes.storageKey(for: "n1"))
      #expect(stored?.first == BinaryFormat.tag)
    }
    for name in try Self.documents {
      #expect(!(try Self.text(name).contains("JSON by default")), "\(name) says JSON is the default coder")
    }
  }

  @Test("every document that gives recordCacheBytes a default gives the one Options has: off")
  func recordCacheDefault() throws {
    #expect(CaskStore.Options().recordCacheBytes == 0)
    var mentions = 0
    for name in try Self.documents {
      let text = try Self.text(name)
      var searched = text.startIndex..<text.endIndex
      while let found = text.range(of: "recordCacheBytes`", range: searched) {
        let after = text[found.upperBound...].prefix(60)
        if after.contains("by default") {
          mentions += 1
          #expect(after.contains("off"), "\(name): \(after)")
          #expect(!after.contains("MiB") && !after.contains("KiB"), "\(name): \(after)")
        }
        searched = found.upperBound..<text.endIndex
      }
    }
    #expect(mentions >= 2)
  }

  @Test("CHANGELOG.md's note on format versions names the version new stores get and the oldest read")
  func changelogFormatVersions() throws {
    let changelog = try Self.text("CHANGELOG.md")
    let intro = changelog.components(separatedBy: "## [Unreleased]").first ?? ""
    #expect(intro.contains("create format version \(CaskFormat.formatVersion) stores"), "\(intro)")
    #expect(intro.contains("still open version \(CaskFormat.oldestReadableVersion) ones"), "\(intro)")
    #expect(!intro.contains("in every version"), "\(intro)")
    // README says the same of new stores.
    #expect(try Self.text("README.md").contains("new stores use on-disk format version \(CaskFormat.formatVersion)"))
  }
}
