"""wsp-ray: wsp environments as Ray runtime environments.

Enable on every node with `RAY_RUNTIME_ENV_PLUGINS='[{"class": "wsp_ray.WspPlugin"}]'`, then
ask for `runtime_env={"wsp": {"python": "3.12", "packages": [...]}}`.
"""

__all__ = ["WspPlugin"]


def __getattr__(name):
    # Ray is imported only when the plugin is, so `wsp` (the console script) starts without it.
    if name == "WspPlugin":
        from .plugin import WspPlugin

        return WspPlugin
    raise AttributeError(name)
