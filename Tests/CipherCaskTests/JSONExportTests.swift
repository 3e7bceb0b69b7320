import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `exportJSON`: one object per line that `importJSON(contentsOf:)` reads back to the same
/// collection; never part of a file at the destination.
@Suite("JSON Lines exports round-trip")
struct JSONExportTests {
  @Test("export then import reproduces the collection: ids, objects, and indexes rebuilt")
  func exportImportRoundTrip() throws {
    try withTemporaryDirectory("export-roundtrip") { directory in
      let url = URL(fileURLWithPath: directory.file("gigs.jsonl"))
      let gigs = (1...300).map { Gig.make("g\($0)", city: $0 % 3 == 0 ? "Porto" : "Lisbon", day: Double($0) / 7) }
      try withIndexStore("export-source") { store, _ in
        try store.gigs().save(contentsOf: gigs)
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted, .sortedKeys]
        #expect(try store.gigs().exportJSON(to: url, encoder: pretty) == 300)
      }
      let text = try String(contentsOf: url, encoding: .utf8)
      #expect(text.split(separator: "\n").count == 300)
      #expect(text.hasSuffix("}\n"))
      #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int == 0o600)
      try withIndexStore("export-target") { store, _ in
        let copy = store.gigs()
        #expect(try copy.importJSON(contentsOf: url) == .init(inserted: 300, replaced: 0))
        #expect(try copy.all().sorted { $0.id < $1.id } == gigs.sorted { $0.id < $1.id })
        try copy.buildIndexes()
        let verification = try copy.verifyIndexes()
        #expect(verification.isConsistent && verification.indexes.count == 8)
        #expect(try copy.readyIndexes().contains("city"))
      }
    }
  }

  @Test("the FileHandle and closure forms write the same lines; an unreadable object leaves no file")
  func streamFormsAndFailures() throws {
    try withTemporaryDirectory("export-forms") { directory in
      try withStore { store in
        let events = store.collection(Event.self)
        try events.importJSON(sampleEventsJSON, decoder: .events)
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        var pieces = Data()
        #expect(try events.exportJSON(encoder: sorted) { pieces.append($0) } == 3)
        let path = directory.file("handle.jsonl")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        #expect(try events.exportJSON(to: handle, encoder: sorted) == 3)
        try handle.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == pieces)
        // An object of another shape: the export fails, and neither the file nor a
        // temporary one is left behind.
        try store.put(Data(#"{"unexpected": true}"#.utf8), forKey: try events.storageKey(for: "broken"))
        let target = URL(fileURLWithPath: directory.file("events.jsonl"))
        #expect(throws: CollectionError.self) { try events.exportJSON(to: target) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["handle.jsonl"])
      }
    }
  }
}
