import Foundation

/// One HTTP/1.1 request and its answer as they crossed the wire, in bytes.
struct SyncExchange: Codable, Sendable {
  /// The method and the path, without the query (which may name records).
  var request: String
  /// What the query asked for, by parameter name only (`_since,_fields,_limit`).
  var query: String
  /// The request line and headers, up to and including the blank line.
  var requestHead = 0
  var requestBody = 0
  var status = 0
  /// The status line and headers of the final answer, with any `100 Continue` before it.
  var responseHead = 0
  var responseBody = 0

  var total: Int { requestHead + requestBody + responseHead + responseBody }
}

/// Splits one direction of an HTTP/1.1 connection into messages: head (start line and
/// headers) and body, whose length is its `Content-Length` (no body without one, none for an
/// answer to `HEAD`, a 1xx, a 204 or a 304). Kinto (waitress) sends every body with a length,
/// and URLSession sends request bodies with one; anything else (a chunked body) stops the
/// split, and the relay's byte totals, which count every byte regardless, stay exact.
struct SyncWireMeter {
  /// A message whose head has been read.
  struct Head {
    var startLine: String
    var headBytes: Int
    var bodyBytes: Int
  }

  private var buffer: [UInt8] = []
  private var bodyLeft = 0
  private(set) var broken = false

  /// Takes the next bytes of the stream.
  ///
  /// - Parameters:
  ///   - hasBody: whether a message with this start line carries the body its headers announce.
  ///   - onHead: called for each message head, before its body is read.
  ///   - onBody: called with the byte count of each piece of a body.
  mutating func consume(
    _ bytes: UnsafeRawBufferPointer, hasBody: (String) -> Bool, onHead: (Head) -> Void, onBody: (Int) -> Void
  ) {
    guard !broken else { return }
    var rest = bytes[...]
    while !rest.isEmpty {
      if bodyLeft > 0 {
        let taken = min(bodyLeft, rest.count)
        bodyLeft -= taken
        onBody(taken)
        rest = rest.dropFirst(taken)
        continue
      }
      buffer.append(contentsOf: rest)
      rest = rest.dropFirst(rest.count)
      while let end = headEnd() {
        let head = Array(buffer[..<end])
        buffer.removeFirst(end)
        guard let parsed = Self.parse(head) else {
          broken = true
          return
        }
        let length = hasBody(parsed.startLine) ? parsed.contentLength : 0
        onHead(Head(startLine: parsed.startLine, headBytes: end, bodyBytes: length))
        let inBuffer = min(length, buffer.count)
        if inBuffer > 0 { onBody(inBuffer) }
        buffer.removeFirst(inBuffer)
        bodyLeft = length - inBuffer
        if bodyLeft > 0 {
          // The rest of the body comes in later reads; nothing else can be in the buffer.
          break
        }
      }
    }
  }

  /// The length of the head at the buffer's start, blank line included, when it is complete.
  private func headEnd() -> Int? {
    guard buffer.count >= 4 else { return nil }
    for index in 3..<buffer.count
    where buffer[index] == 10 && buffer[index - 1] == 13 && buffer[index - 2] == 10 && buffer[index - 3] == 13 {
      return index + 1
    }
    return nil
  }

  private static func parse(_ head: [UInt8]) -> (startLine: String, contentLength: Int)? {
    guard let text = String(bytes: head, encoding: .isoLatin1) else { return nil }
    let lines = text.components(separatedBy: "\r\n")
    var length = 0
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let name = line[..<colon].lowercased()
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      if name == "transfer-encoding" { return nil }
      if name == "content-length" {
        guard let parsed = Int(value), parsed >= 0 else { return nil }
        length = parsed
      }
    }
    return (lines.first ?? "", length)
  }
}
