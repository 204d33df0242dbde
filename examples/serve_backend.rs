//! A backend of your own (the interpreter's `python -m venv --without-pip`) served with the
//! environment methods over stdio: `cargo run --example serve_backend -- STATE_DIR`.

use tokio::process::Command;
use wsp_backend::{BackendError, ProvisionRequest, Provisioned};
use wsp_environments::{store::Store, Environments};
use wsp_install::venv_layout::{interpreter_path, VenvLayout, VenvProvider};
use wsp_interpreters::{Inventory, InventoryConfig};
use wsp_protocol::FailureReason::ProvisionFailed;
use wsp_server::ServerBuilder;

struct StdlibVenv(Inventory);

impl VenvProvider for StdlibVenv {
    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        let base = self.0.resolve(&request.python_version).await?;
        let mut venv = Command::new(&base.executable);
        venv.args(["-m", "venv", "--without-pip"])
            .kill_on_drop(true);
        match venv.arg(&request.root).status().await {
            Ok(status) if status.success() => Ok(Provisioned {
                python_full_version: base.version,
                interpreter_path: interpreter_path(&request.root),
                extra: Default::default(),
            }),
            _ => Err(BackendError::failed(ProvisionFailed, "venv failed")),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .ok_or("usage: serve_backend STATE_DIR")?;
    let store = Store::open(dir.as_ref())?;
    let backend = VenvLayout(StdlibVenv(Inventory::new(InventoryConfig::from_env())));
    let environments = Environments::new(store, "stdlib-venv", backend);
    let server = ServerBuilder::new().group(environments).build();
    std::process::exit(server.run_stdio());
}
