# Build-time sizes of the an547 firmware, for every target of its cross build
# (the agent's structures must be the same size in the libraries and in the
# application). Chosen for a microcontroller; docs/porting.md explains each.
add_compile_definitions(
  MOTA_AGENT_MAX_MODELS=2u   # models this product serves (provisioning may name up to 2)
  MOTA_LINK_MAX_PAYLOAD=512u # frame payload: RAM for one frame in, one answer out
  MOTA_LINK_WINDOW=12u       # 12 frames in flight (about 6.3 KiB) fit the 8 KiB UART RX ring
  MOTA_ERR_STRINGS=0)        # bare reason codes on the device: the host names them
