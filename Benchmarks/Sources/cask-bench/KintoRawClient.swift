import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Plain HTTP on a Kinto server with URLSession and `JSONSerialization`, nothing stored: the
/// bound `cask-bench sync` sets beside `CaskSync`. It sends the requests a client that keeps
/// nothing would send for the same records (the same pages, the same batches), and counts
/// them and their body bytes as `SyncReport` does.
final class KintoRawClient: Sendable {
  /// Requests sent and body bytes moved (request and response) by one measured step.
  struct Traffic: Codable {
    var requests = 0
    var bytes = 0
  }

  let root: URL
  private let authorization: String
  private let session: URLSession

  init(root: URL, user: String, password: String) {
    self.root = root
    authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    session = URLSession(configuration: .ephemeral)
  }

  /// Sends one request; `body` is JSON.
  ///
  /// - Returns: the status, the response body and its headers (names in lower case).
  func send(
    _ method: String, _ url: URL, body: Data? = nil, headers extra: [String: String] = [:], traffic: inout Traffic
  ) async throws
    -> (status: Int, body: Data, headers: [String: String])
  {
    var request = URLRequest(url: url, timeoutInterval: 60)
    request.httpMethod = method
    request.setValue(authorization, forHTTPHeaderField: "Authorization")
    for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
    if let body {
      request.httpBody = body
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let data: Data
    let response: URLResponse
    do {
      (data, response) = try await session.data(for: request)
    } catch {
      throw BenchError("\(method) \(url.path) got no answer: \(error.localizedDescription)")
    }
    traffic.requests += 1
    traffic.bytes += (body?.count ?? 0) + data.count
    var headers: [String: String] = [:]
    let http = response as? HTTPURLResponse
    for (key, value) in http?.allHeaderFields ?? [:] {
      if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
    }
    return (http?.statusCode ?? 0, data, headers)
  }

  /// The records path of `collection` in `bucket`.
  func recordsURL(_ bucket: String, _ collection: String) -> String {
    root.absoluteString + "/buckets/\(bucket)/collections/\(collection)/records"
  }

  /// Lists a collection's records page by page (`_limit`, oldest first, following
  /// `Next-Page`), changes since `since` only when given, tombstones included.
  ///
  /// - Returns: every record listed and the first page's `ETag` (the collection's timestamp).
  func list(_ bucket: String, _ collection: String, since: String?, pageSize: Int, traffic: inout Traffic)
    async throws -> (records: [[String: Any]], etag: String?)
  {
    var query = "?_sort=last_modified&_limit=\(pageSize)"
    if let since { query += "&_since=\(since.replacingOccurrences(of: "\"", with: ""))" }
    var next = URL(string: recordsURL(bucket, collection) + query)
    var records: [[String: Any]] = []
    var etag: String?
    while let page = next {
      let answer = try await send("GET", page, traffic: &traffic)
      guard answer.status == 200,
        let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
        let data = object["data"] as? [[String: Any]]
      else { throw BenchError("a listing of \(bucket)/\(collection) answered \(answer.status)") }
      if etag == nil { etag = answer.headers["etag"] }
      records += data
      next = answer.headers["next-page"].flatMap(URL.init(string:))
    }
    return (records, etag)
  }

  /// Creates `collection` in `bucket` (and the bucket) if missing.
  func create(_ bucket: String, _ collection: String) async throws {
    var traffic = Traffic()
    for path in ["/buckets/\(bucket)", "/buckets/\(bucket)/collections/\(collection)"] {
      let answer = try await send(
        "PUT", URL(string: root.absoluteString + path)!, body: Data("{\"data\": {}}".utf8),
        headers: ["If-None-Match": "*"], traffic: &traffic)
      guard [200, 201, 412].contains(answer.status) else { throw BenchError("PUT \(path) answered \(answer.status)") }
    }
  }

  /// Puts `records` (each with its `id`) into `collection` as new records, in batches of
  /// `batchLimit` requests with `If-None-Match: *`, one batch after the other.
  func push(
    _ records: [[String: Any]], to bucket: String, _ collection: String, batchLimit: Int, traffic: inout Traffic
  )
    async throws
  {
    let path = URL(string: recordsURL(bucket, collection))!.path
    var start = 0
    while start < records.count {
      let chunk = records[start..<min(records.count, start + batchLimit)]
      start += chunk.count
      let requests: [[String: Any]] = chunk.map { record in
        var data = record
        data["last_modified"] = nil
        return [
          "method": "PUT", "path": path + "/" + (record["id"] as? String ?? ""), "headers": ["If-None-Match": "*"],
          "body": ["data": data],
        ]
      }
      let body = try JSONSerialization.data(withJSONObject: ["requests": requests])
      let answer = try await send("POST", URL(string: root.absoluteString + "/batch")!, body: body, traffic: &traffic)
      guard answer.status == 200,
        let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
        let responses = object["responses"] as? [[String: Any]], responses.count == chunk.count
      else { throw BenchError("a batch answered \(answer.status)") }
      let statuses = responses.map { ($0["status"] as? NSNumber)?.intValue ?? 0 }
      if let failed = statuses.first(where: { $0 != 201 }) {
        throw BenchError("a batch item answered \(failed) where 201 was expected")
      }
    }
  }
}
