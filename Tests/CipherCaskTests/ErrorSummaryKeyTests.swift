import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `CollectionError.summary`: a dictionary's keys are data, also when they are numbers.
@Suite("Import errors quote no numeric dictionary key")
struct ErrorSummaryKeyTests {
  @Test("an import error does not quote an Int dictionary key of the data it refused")
  func intDictionaryKeyIsNotQuoted() throws {
    try withStore("summary-key") { store throws in
      let balances = store.collection(Balances.self)
      let json = Data(#"[{"id": "a", "byAccount": {"4111111111111111": "not a number"}}]"#.utf8)
      do {
        try balances.importJSON(json)
        Issue.record("expected invalidImport")
      } catch let error as CollectionError {
        #expect(!String(describing: error).contains("4111111111111111"), "\(error)")
      }
    }
  }

  @Test("an import error does not quote a dictionary key of the data it refused")
  func importErrorQuotesNoDictionaryKey() throws {
    try withStore { store throws in
      let scores = store.collection(Scores.self)
      let json = Data(#"[{"id": "a", "byPatient": {"jane-doe-1970-05-04": "not a number"}}]"#.utf8)
      do {
        try scores.importJSON(json)
        Issue.record("expected invalidImport")
      } catch let error as CollectionError {
        #expect(!String(describing: error).contains("jane-doe"), "\(error)")
      }
    }
  }
}

private struct Balances: Codable, Identifiable, Sendable {
  var id: String
  var byAccount: [Int: Int]
}

/// An object with a dictionary whose keys are data, not field names.
private struct Scores: Codable, Identifiable, Sendable {
  var id: String
  var byPatient: [String: Int]
}
