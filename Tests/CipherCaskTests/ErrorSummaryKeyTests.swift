import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `CaskError.summary`: a dictionary's keys are data, also when they are numbers.
@Suite("Import errors quote no numeric dictionary key")
struct ErrorSummaryKeyTests {
  @Test("an import error does not quote an Int dictionary key of the data it refused")
  func intDictionaryKeyIsNotQuoted() throws {
    try withStore("review-summary") { store throws in
      let balances = store.collection(Balances.self)
      let json = Data(#"[{"id": "a", "byAccount": {"4111111111111111": "not a number"}}]"#.utf8)
      do {
        try balances.importJSON(json)
        Issue.record("expected invalidImport")
      } catch let error as CaskError {
        #expect(!String(describing: error).contains("4111111111111111"), "\(error)")
      }
    }
  }
}

private struct Balances: Codable, Identifiable, Sendable {
  var id: String
  var byAccount: [Int: Int]
}
