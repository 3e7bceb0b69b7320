import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A TCP relay on 127.0.0.1 between `cask-bench sync`'s clients and Kinto that counts every
/// byte each way: request lines, headers (those URLSession and libcurl add too: `Host`,
/// `Content-Length`, `Expect`, …) and bodies, and splits them per request (`SyncExchange`).
/// `SyncReport` sees only bodies; what goes on the wire is what this counts.
final class SyncWireCounter: @unchecked Sendable {
  /// The relay's `/v1` root.
  let url: URL
  private let listener: Int32
  private let target: sockaddr_in
  private let lock = NSLock()
  // Guarded by `lock`.
  private var exchanges: [SyncExchange] = []
  private var bytes = 0

  /// Listens on a free port and relays each connection to `server` (a `/v1` root on 127.0.0.1).
  init(server: URL) throws {
    guard let port = server.port else { throw BenchError("the server's URL has no port") }
    target = Loopback.address(port: port)
    let (descriptor, relayPort) = try Loopback.bind()
    guard listen(descriptor, 64) == 0 else {
      close(descriptor)
      throw BenchError("cannot listen on 127.0.0.1 for the byte-counting relay")
    }
    listener = descriptor
    url = URL(string: "http://127.0.0.1:\(relayPort)\(server.path)")!
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  /// Stops accepting connections (those open end when either side closes them).
  func stop() {
    shutdown(listener, Int32(SHUT_RDWR))
  }

  /// Every byte relayed and the exchanges completed since the last call; starts afresh.
  func take() -> (bytes: Int, exchanges: [SyncExchange]) {
    lock.withLock {
      defer {
        bytes = 0
        exchanges = []
      }
      return (bytes, exchanges)
    }
  }

  private func acceptLoop() {
    while true {
      let client = accept(listener, nil, nil)
      if client < 0 {
        if errno == EINTR { continue }
        close(listener)
        return
      }
      let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = target
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard server >= 0, connected == 0 else {
        close(client)
        if server >= 0 { close(server) }
        continue
      }
      let connection = Connection(client: client, server: server, counter: self)
      Thread.detachNewThread { connection.pump(requests: true) }
      Thread.detachNewThread { connection.pump(requests: false) }
    }
  }

  fileprivate func add(bytes count: Int) {
    lock.withLock { bytes += count }
  }

  fileprivate func add(_ exchange: SyncExchange) {
    lock.withLock { exchanges.append(exchange) }
  }
}

/// One relayed connection: a thread per direction, each splitting its stream into messages.
/// The answer to a request is the next final answer on the connection (HTTP/1.1 without
/// pipelining, as URLSession sends); it is recorded before its last bytes are passed on, so a
/// client that has its answer finds the exchange counted.
private final class Connection: @unchecked Sendable {
  let client: Int32
  let server: Int32
  let counter: SyncWireCounter
  private let lock = NSLock()
  // Guarded by `lock`.
  private var waiting: [SyncExchange] = []
  /// The answer whose body is being read, and the body's length.
  private var answering: (exchange: SyncExchange, length: Int)?
  private var open = 2

  init(client: Int32, server: Int32, counter: SyncWireCounter) {
    self.client = client
    self.server = server
    self.counter = counter
  }

  func pump(requests: Bool) {
    let from = requests ? client : server
    let to = requests ? server : client
    var meter = SyncWireMeter()
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      counter.add(bytes: count)
      buffer.withUnsafeBytes { raw in
        let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<count])
        if requests {
          meter.consume(chunk, hasBody: { _ in true }, onHead: requestHead, onBody: requestBody)
        } else {
          meter.consume(chunk, hasBody: responseHasBody, onHead: responseHead, onBody: responseBody)
        }
      }
      guard writeAll(to, buffer, count) else { break }
    }
    shutdown(to, Int32(SHUT_WR))
    let last = lock.withLock {
      open -= 1
      return open == 0
    }
    if last {
      close(client)
      close(server)
    }
  }

  private func writeAll(_ descriptor: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
    var offset = 0
    while offset < count {
      let written = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, count - offset) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { return false }
      offset += written
    }
    return true
  }

  // MARK: Requests

  private func requestHead(_ head: SyncWireMeter.Head) {
    let parts = head.startLine.split(separator: " ")
    let target = parts.count > 1 ? String(parts[1]) : ""
    let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target
    let query = target.contains("?") ? String(target.split(separator: "?", maxSplits: 1)[1]) : ""
    let names = query.split(separator: "&").map { $0.split(separator: "=").first.map(String.init) ?? "" }
    let exchange = SyncExchange(
      request: "\(parts.first ?? "") \(path)", query: names.joined(separator: ","), requestHead: head.headBytes,
      requestBody: 0)
    lock.withLock { waiting.append(exchange) }
  }

  private func requestBody(_ count: Int) {
    lock.withLock { if !waiting.isEmpty { waiting[waiting.count - 1].requestBody += count } }
  }

  // MARK: Answers

  private func responseHasBody(_ statusLine: String) -> Bool {
    let status = Self.status(statusLine)
    if (100..<200).contains(status) || status == 204 || status == 304 { return false }
    return lock.withLock { !(waiting.first?.request.hasPrefix("HEAD ") ?? false) }
  }

  private func responseHead(_ head: SyncWireMeter.Head) {
    let status = Self.status(head.startLine)
    let finished: SyncExchange? = lock.withLock {
      guard !waiting.isEmpty else { return nil }
      if (100..<200).contains(status) {
        waiting[0].responseHead += head.headBytes
        return nil
      }
      var exchange = waiting.removeFirst()
      exchange.status = status
      exchange.responseHead += head.headBytes
      exchange.responseBody = 0
      guard head.bodyBytes > 0 else { return exchange }
      answering = (exchange, head.bodyBytes)
      return nil
    }
    if let finished { counter.add(finished) }
  }

  private func responseBody(_ count: Int) {
    let finished: SyncExchange? = lock.withLock {
      guard case (var exchange, let length)? = answering else { return nil }
      exchange.responseBody += count
      guard exchange.responseBody >= length else {
        answering = (exchange, length)
        return nil
      }
      answering = nil
      return exchange
    }
    if let finished { counter.add(finished) }
  }

  private static func status(_ line: String) -> Int {
    let parts = line.split(separator: " ")
    return parts.count > 1 ? Int(parts[1]) ?? 0 : 0
  }
}
