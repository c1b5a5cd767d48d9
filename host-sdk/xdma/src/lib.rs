//! PCIe transport to Alveo cards over the Xilinx XDMA driver's character devices.
