import CipherCask
import Foundation

/// The id of an imported object: the value at the `--id-key` field, as a string.
///
/// Decoding it also parses the whole object, so malformed JSON and values that are not
/// objects are found here. Strings are taken as they are, integers in decimal, other numbers
/// as Swift prints a `Double`; anything else is refused.
struct ImportID: Decodable {
  static let fieldKey = CodingUserInfoKey(rawValue: "cask.import.idKey")!

  let value: String

  private struct FieldName: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  /// Why an object has no usable id; never quotes a value.
  enum Problem: Error {
    case missing(String)
    case unusable(String)
    case empty(String)

    var reason: String {
      switch self {
      case .missing(let field): return "the object has no '\(field)' field"
      case .unusable(let field): return "the value of '\(field)' is not a string or a number"
      case .empty(let field): return "the value of '\(field)' is an empty string"
      }
    }
  }

  init(from decoder: any Decoder) throws {
    let field = decoder.userInfo[Self.fieldKey] as? String ?? "id"
    let container = try decoder.container(keyedBy: FieldName.self)
    let key = FieldName(stringValue: field)
    guard container.contains(key), try !container.decodeNil(forKey: key) else { throw Problem.missing(field) }
    if let string = try? container.decode(String.self, forKey: key) {
      guard !string.isEmpty else { throw Problem.empty(field) }
      value = string
    } else if let integer = try? container.decode(Int64.self, forKey: key) {
      value = String(integer)
    } else if let integer = try? container.decode(UInt64.self, forKey: key) {
      value = String(integer)
    } else if let number = try? container.decode(Double.self, forKey: key), number.isFinite {
      value = String(number)
    } else {
      throw Problem.unusable(field)
    }
  }

  /// The id of `record`.
  ///
  /// - Throws: `CaskError.invalidImport` with the record's line.
  static func of(_ record: JSONRecord, field: String) throws -> String {
    let decoder = JSONDecoder()
    decoder.userInfo[fieldKey] = field
    do {
      return try decoder.decode(ImportID.self, from: record.bytes).value
    } catch let problem as Problem {
      throw CaskError.invalidImport(reason: problem.reason, line: record.line)
    } catch DecodingError.typeMismatch {
      throw CaskError.invalidImport(reason: "not a JSON object", line: record.line)
    } catch {
      throw CaskError.invalidImport(reason: "malformed JSON", line: record.line)
    }
  }
}
