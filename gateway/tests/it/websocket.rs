//! WebSocket upgrades pass through the gateway: an echo server behind it echoes.

use crate::harness;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn websocket_echo_through_the_gateway() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let upstream = listener.local_addr().expect("address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut socket) = tokio_tungstenite::accept_async(stream).await else { return };
                while let Some(Ok(message)) = socket.next().await {
                    if message.is_text() || message.is_binary() {
                        let _ = socket.send(message).await;
                    }
                }
            });
        }
    });
    let gateway = harness::gateway(&[("ws.test", upstream)], "").await;
    let stream = tokio::net::TcpStream::connect(gateway.address).await.expect("connect");
    let (mut socket, response) = tokio_tungstenite::client_async("ws://ws.test/echo", stream)
        .await
        .expect("upgrade through the gateway");
    assert_eq!(response.status(), 101);
    for text in ["hello", "second message", &"x".repeat(100_000)] {
        socket.send(Message::text(text)).await.expect("send");
        let echoed = socket.next().await.expect("echo").expect("ok");
        assert_eq!(echoed.into_text().expect("text").as_str(), text);
    }
    socket.send(Message::binary(vec![0u8, 159, 146, 150])).await.expect("send");
    assert_eq!(socket.next().await.expect("echo").expect("ok").into_data().as_ref(), &[0u8, 159, 146, 150]);
    socket.close(None).await.expect("close");
    gateway.stop().await;
}
