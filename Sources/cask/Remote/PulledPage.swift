import CipherCask
import Foundation

/// The objects of one answer of `cask pull`, each as the bytes the server sent (from `{` to
/// `}`) with the line it starts on, and the link to the next page if the answer has one.
///
/// An answer is a JSON array of objects, a bare object (it has the id field), or an envelope:
/// an object whose `result` member (or the one `--envelope` names) holds the array or the
/// object, and whose `next` member (`--next-key`) may name the next page. The whole answer is
/// checked to be JSON first; the objects are then cut out of it with `JSONRecordReader`, so
/// that what is stored is exactly what was sent, as `cask import` stores it.
struct PulledPage {
  var records: [JSONRecord]
  var next: String?

  /// The default envelope member, `result`.
  static let defaultEnvelope = "result"

  /// - Parameter nextKey: the member that links to the next page, or `nil` when pages are not
  ///   linked (`--page-parameter`).
  /// - Throws: `CollectionError.invalidImport` (with a line when one is known) for an answer that
  ///   is not JSON or not of one of the shapes above, or whose `nextKey` member is neither a
  ///   string nor null. Never quotes a value.
  static func parse(_ body: Data, idKey: String, envelope: String?, nextKey: String?) throws -> PulledPage {
    let root: Any
    do {
      root = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    } catch {
      throw CollectionError.invalidImport(reason: "malformed JSON", line: nil)
    }
    if root is [Any] {
      return PulledPage(records: try records(inArray: body, firstLine: 1), next: nil)
    }
    guard let object = root as? [String: Any] else {
      throw CollectionError.invalidImport(reason: "expected an object or an array of objects", line: nil)
    }
    let member: String
    if let envelope {
      guard object[envelope] != nil else {
        throw CollectionError.invalidImport(reason: "the answer has no '\(envelope)' envelope", line: nil)
      }
      member = envelope
    } else if object[idKey] != nil {
      return PulledPage(records: [JSONRecord(line: firstLine(of: body), bytes: trimmed(body))], next: nil)
    } else if object[defaultEnvelope] != nil {
      member = defaultEnvelope
    } else {
      throw CollectionError.invalidImport(
        reason: "expected an array of objects, an object with '\(idKey)', or a '\(defaultEnvelope)' envelope",
        line: nil)
    }
    let next = try nextKey.flatMap { try link(object[$0], key: $0) }
    let inner = object[member]
    if inner is NSNull { return PulledPage(records: [], next: next) }
    guard inner is [Any] || inner is [String: Any], let span = MemberSpan.find(member, in: body) else {
      throw CollectionError.invalidImport(
        reason: "the '\(member)' envelope holds neither an object nor an array of objects", line: nil)
    }
    let line = 1 + body[..<span.lowerBound].count { $0 == UInt8(ascii: "\n") }
    if inner is [Any] {
      return PulledPage(records: try records(inArray: Data(body[span]), firstLine: line), next: next)
    }
    return PulledPage(records: [JSONRecord(line: line, bytes: Data(body[span]))], next: next)
  }

  /// The link in a `next` member's value, or `nil` on the last page: no member, `null` or an
  /// empty string. Any other value (a number, an object), read as "no next page", would end the
  /// walk as complete with the pages after it missing.
  private static func link(_ value: Any?, key: String) throws -> String? {
    switch value {
    case nil, is NSNull: return nil
    case let link as String: return link.isEmpty ? nil : link
    default: throw CollectionError.invalidImport(reason: "its '\(key)' member is neither a link nor null", line: nil)
    }
  }

  /// The objects of a JSON array, by `JSONRecordReader`, with lines counted from `firstLine`.
  private static func records(inArray bytes: Data, firstLine: Int) throws -> [JSONRecord] {
    var remaining: Data? = bytes
    let reader = JSONRecordReader { _ in
      defer { remaining = nil }
      return remaining ?? Data()
    }
    var records: [JSONRecord] = []
    do {
      while var record = try reader.next() {
        record.line += firstLine - 1
        records.append(record)
      }
    } catch CollectionError.invalidImport(let reason, let line) {
      throw CollectionError.invalidImport(reason: reason, line: line.map { $0 + firstLine - 1 })
    }
    return records
  }

  private static func firstLine(of body: Data) -> Int {
    let start = body.firstIndex { !isWhitespace($0) } ?? body.startIndex
    return 1 + body[..<start].count { $0 == UInt8(ascii: "\n") }
  }

  private static func trimmed(_ body: Data) -> Data {
    guard let first = body.firstIndex(where: { !isWhitespace($0) }),
      let last = body.lastIndex(where: { !isWhitespace($0) })
    else { return Data() }
    return Data(body[first...last])
  }

  static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }
}
